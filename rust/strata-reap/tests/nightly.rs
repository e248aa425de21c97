//! The nightly `core::alloc::Allocator` for `&Reap` (feature `nightly`, run by
//! `make test-rust-asan`, which uses the nightly toolchain).
#![cfg(feature = "nightly")]
#![feature(allocator_api)]

use strata_reap::Reap;

#[test]
fn std_collections_live_in_a_reap() {
    let reap = Reap::new();
    let mut v: Vec<u64, &Reap> = Vec::new_in(&reap);
    v.extend(0..10_000);
    let b = Box::new_in([3u32; 100], &reap);
    assert_eq!(v.iter().sum::<u64>(), 49_995_000);
    assert_eq!(b.iter().sum::<u32>(), 300);
    assert_eq!(reap.stats().bytes_live, v.capacity() * 8 + 400);
    drop((v, b));
    assert_eq!(reap.stats().bytes_live, 0, "dropping frees individually");
}
