//! One run of the allocation-only loop, for `valgrind --tool=callgrind`
//! instruction counts of the fast paths: `alloc_loop NAME OBJECTS`.
use strata_bench::contenders::TypedArenas;
use strata_bench::{alloc_only, Arena};

fn run<A: Arena>(objects: usize) -> u64 {
    alloc_only(&A::new(), objects)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let objects: usize = args.get(2).map_or(1_000_000, |n| n.parse().unwrap());
    let sum = match args.get(1).map(String::as_str) {
        Some("strata-reap") => run::<strata_reap::Reap>(objects),
        Some("bumpalo") => run::<bumpalo::Bump>(objects),
        Some("bump-scope") => run::<bump_scope::Bump>(objects),
        Some("typed-arena") => TypedArenas::default().alloc_only(objects),
        _ => panic!("usage: alloc_loop strata-reap|bumpalo|bump-scope|typed-arena [OBJECTS]"),
    };
    println!("{sum}");
}
