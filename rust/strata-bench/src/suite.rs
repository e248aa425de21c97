//! Every workload with every contender, as boxed closures, for the criterion
//! bench and the paired comparison alike. A closure runs the whole workload:
//! it makes the arena, allocates, and drops everything.
use std::alloc::System;

use allocator_api2::boxed::Box as ABox;
use allocator_api2::vec::Vec as AVec;
use mimalloc::MiMalloc;
use strata_alloc::Strata;
use strata_reap::Reap;

use crate::contenders::{Heap, Named, TypedArenas};
use crate::parse::{expression, parse_and_eval, InArena, InBoxes, InTypedArena};
use crate::{alloc_only, churn, vec_growth, Arena, Via, ALLOC_ONLY_OBJECTS, VEC_GROWTH_VECTORS};

/// One contender of one workload: its name and the whole run.
pub type Run = (&'static str, Box<dyn Fn() -> u64>);

/// The workloads, by name.
pub const WORKLOADS: &[&str] = &["alloc_only", "alloc_only_warm", "vec_growth", "parse_tree", "churn"];

/// Steps of the timed churn.
pub const CHURN_STEPS: usize = 2_000_000;

/// Depth of the parse tree's expression (2^20 - 1 nodes).
pub const PARSE_DEPTH: u32 = 20;

fn arena_alloc_only<A: Arena + 'static>() -> Run {
    (A::NAME, Box::new(|| alloc_only(&A::new(), ALLOC_ONLY_OBJECTS)))
}

fn heap_vec_growth<G: Named>() -> Run {
    (G::NAME, Box::new(|| vec_growth!(VEC_GROWTH_VECTORS, AVec::new_in(Via::<G>::new())) as u64))
}

/// The contenders of `workload` (one of [`WORKLOADS`]).
pub fn contenders(workload: &str) -> Vec<Run> {
    match workload {
        "alloc_only" => vec![
            arena_alloc_only::<Reap>(),
            arena_alloc_only::<bumpalo::Bump>(),
            arena_alloc_only::<bump_scope::Bump>(),
            (TypedArenas::NAME, Box::new(|| TypedArenas::default().alloc_only(ALLOC_ONLY_OBJECTS))),
            arena_alloc_only::<Heap<System>>(),
            arena_alloc_only::<Heap<MiMalloc>>(),
            arena_alloc_only::<Heap<Strata>>(),
        ],
        "alloc_only_warm" => alloc_only_warm_contenders(),
        "vec_growth" => vec![
            (
                "strata-reap",
                Box::new(|| {
                    let reap = Reap::new();
                    vec_growth!(VEC_GROWTH_VECTORS, AVec::new_in(&reap)) as u64
                }),
            ),
            (
                "bumpalo",
                Box::new(|| {
                    let bump = bumpalo::Bump::new();
                    vec_growth!(VEC_GROWTH_VECTORS, bumpalo::collections::Vec::new_in(&bump)) as u64
                }),
            ),
            (
                "bump-scope",
                Box::new(|| {
                    let bump: bump_scope::Bump = bump_scope::Bump::new();
                    vec_growth!(VEC_GROWTH_VECTORS, bump_scope::BumpVec::new_in(&bump)) as u64
                }),
            ),
            heap_vec_growth::<System>(),
            heap_vec_growth::<MiMalloc>(),
            heap_vec_growth::<Strata>(),
        ],
        "parse_tree" => parse_tree_contenders(),
        "churn" => churn_contenders(),
        _ => panic!("unknown workload {workload}"),
    }
}

/// alloc_only on a long-lived arena emptied after each run (clear, reset):
/// the arena's memory is already mapped and touched, so what is left is the
/// allocation path itself. typed-arena has no reset (left out); heaps free
/// their objects as in alloc_only.
fn alloc_only_warm_contenders() -> Vec<Run> {
    let reap = std::cell::RefCell::new(Reap::new());
    let bump = std::cell::RefCell::new(bumpalo::Bump::new());
    let scope = std::cell::RefCell::new(bump_scope::Bump::<bump_scope::alloc::Global>::new());
    vec![
        (
            "strata-reap",
            Box::new(move || {
                let mut reap = reap.borrow_mut();
                let sum = alloc_only(&*reap, ALLOC_ONLY_OBJECTS);
                reap.clear();
                sum
            }),
        ),
        (
            "bumpalo",
            Box::new(move || {
                let mut bump = bump.borrow_mut();
                let sum = alloc_only(&*bump, ALLOC_ONLY_OBJECTS);
                bump.reset();
                sum
            }),
        ),
        (
            "bump-scope",
            Box::new(move || {
                let mut bump = scope.borrow_mut();
                let sum = alloc_only(&*bump, ALLOC_ONLY_OBJECTS);
                bump.reset();
                sum
            }),
        ),
        arena_alloc_only::<Heap<System>>(),
        arena_alloc_only::<Heap<MiMalloc>>(),
        arena_alloc_only::<Heap<Strata>>(),
    ]
}

fn parse_tree_contenders() -> Vec<Run> {
    let text: &'static [u8] = expression(PARSE_DEPTH).leak().as_bytes();
    vec![
        ("strata-reap", Box::new(move || parse_and_eval(&InArena(&Reap::new()), text) as u64)),
        ("bumpalo", Box::new(move || parse_and_eval(&InArena(&bumpalo::Bump::new()), text) as u64)),
        ("bump-scope", Box::new(move || parse_and_eval(&InArena(&bump_scope::Bump::new()), text) as u64)),
        ("typed-arena", Box::new(move || parse_and_eval(&InTypedArena(&typed_arena::Arena::new()), text) as u64)),
        (System::NAME, Box::new(move || parse_and_eval(&InBoxes(Via::<System>::new()), text) as u64)),
        (MiMalloc::NAME, Box::new(move || parse_and_eval(&InBoxes(Via::<MiMalloc>::new()), text) as u64)),
        (Strata::NAME, Box::new(move || parse_and_eval(&InBoxes(Via::<Strata>::new()), text) as u64)),
    ]
}

/// Runs `steps` steps of churn under `name`, calling `probe(step, arena_bytes)`
/// every `every` steps (arena_bytes: what the arena holds from the system, 0
/// for heaps). None for an unknown name.
pub fn churn_named(name: &str, steps: usize, every: u64, probe: &mut dyn FnMut(u64, usize)) -> Option<u64> {
    Some(match name {
        "strata-reap" => {
            let reap = Reap::new();
            churn!(steps, every, |s| probe(s, reap.stats().bytes_held), |v| ABox::new_in(v, &reap))
        }
        "bumpalo" => {
            let bump = bumpalo::Bump::new();
            churn!(steps, every, |s| probe(s, bump.allocated_bytes()), |v| bumpalo::boxed::Box::new_in(v, &bump))
        }
        "bump-scope" => {
            let bump: bump_scope::Bump = bump_scope::Bump::new();
            churn!(steps, every, |s| probe(s, bump.stats().size()), |v| bump.alloc(v))
        }
        "Box (system)" => churn!(steps, every, |s| probe(s, 0), |v| ABox::new_in(v, Via::<System>::new())),
        "Box (mimalloc)" => churn!(steps, every, |s| probe(s, 0), |v| ABox::new_in(v, Via::<MiMalloc>::new())),
        "Box (strata-alloc)" => churn!(steps, every, |s| probe(s, 0), |v| ABox::new_in(v, Via::<Strata>::new())),
        _ => return None,
    })
}

/// The contenders of the churn (typed-arena holds one type and frees nothing:
/// left out).
pub const CHURN_CONTENDERS: &[&str] =
    &["strata-reap", "bumpalo", "bump-scope", "Box (system)", "Box (mimalloc)", "Box (strata-alloc)"];

fn churn_contenders() -> Vec<Run> {
    CHURN_CONTENDERS
        .iter()
        .map(|&name| -> Run { (name, Box::new(move || churn_named(name, CHURN_STEPS, 0, &mut |_, _| {}).unwrap())) })
        .collect()
}
