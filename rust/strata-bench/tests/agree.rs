//! The benchmark workloads compute the same results under every contender
//! (small sizes), so the benchmarks compare the same work.
use strata_bench::contenders::{Heap, TypedArenas};
use strata_bench::parse::{expression, parse_and_eval, InArena, InBoxes, InTypedArena};
use strata_bench::suite::{churn_named, CHURN_CONTENDERS};
use strata_bench::{alloc_only, vec_growth, Arena, Via};

#[test]
fn alloc_only_agrees() {
    let expect = alloc_only(&bumpalo::Bump::new(), 5000);
    assert_eq!(expect, (0..1000u64).sum::<u64>());
    assert_eq!(alloc_only(&strata_reap::Reap::new(), 5000), expect);
    assert_eq!(alloc_only(&<bump_scope::Bump as Arena>::new(), 5000), expect);
    assert_eq!(TypedArenas::default().alloc_only(5000), expect);
    assert_eq!(alloc_only(&Heap::<std::alloc::System>::new(), 5000), expect);
    assert_eq!(alloc_only(&Heap::<mimalloc::MiMalloc>::new(), 5000), expect);
    assert_eq!(alloc_only(&Heap::<strata_alloc::Strata>::new(), 5000), expect);
}

#[test]
fn vec_growth_agrees() {
    let reap = strata_reap::Reap::new();
    let n = vec_growth!(1500, allocator_api2::vec::Vec::new_in(&reap));
    assert_eq!(n, (1..=1000).sum::<usize>() + (1..=500).sum::<usize>());
    let bump = bumpalo::Bump::new();
    assert_eq!(vec_growth!(1500, bumpalo::collections::Vec::new_in(&bump)), n);
    let heap = Via::<strata_alloc::Strata>::new();
    assert_eq!(vec_growth!(1500, allocator_api2::vec::Vec::new_in(heap)), n);
}

#[test]
fn parse_tree_agrees() {
    let text = expression(12);
    assert_eq!(text.bytes().filter(|&b| b == b'(').count(), (1 << 11) - 1);
    let text = text.as_bytes();
    let expect = parse_and_eval(&InArena(&bumpalo::Bump::new()), text);
    assert_eq!(parse_and_eval(&InArena(&strata_reap::Reap::new()), text), expect);
    assert_eq!(parse_and_eval(&InTypedArena(&typed_arena::Arena::new()), text), expect);
    assert_eq!(parse_and_eval(&InBoxes(Via::<mimalloc::MiMalloc>::new()), text), expect);
    assert_eq!(parse_and_eval(&InBoxes(Via::<strata_alloc::Strata>::new()), text), expect);
}

#[test]
fn churn_agrees_and_the_reap_stays_flat() {
    let mut held = Vec::new();
    let expect = churn_named("bumpalo", 100_000, 0, &mut |_, _| {}).unwrap();
    for name in CHURN_CONTENDERS {
        let sum = churn_named(name, 100_000, 20_000, &mut |_, bytes| {
            if *name == "strata-reap" {
                held.push(bytes)
            }
        });
        assert_eq!(sum, Some(expect), "{name}");
    }
    assert_eq!(held.len(), 5);
    assert!(held.iter().all(|&b| b == held[0]), "the reap grows under churn: {held:?}");
}
