//! The workloads of strata-reap's benchmarks, shared by the criterion bench
//! (`cargo bench`) and the paired comparison (`cargo run --release --bin
//! paired`). Each contender runs the same code: arenas through [`Arena`],
//! heaps (`Box` on a global allocator) through [`Heap`].
//!
//! * `alloc_only`: 10 M small objects of mixed sizes (8, 16, 24, 32, 48 bytes),
//!   never freed one by one; the arena (or each box) goes at the end.
//! * `vec_growth`: 10 000 vectors grown by `push` to 1..=1000 elements, kept
//!   until the end.
//! * `parse_tree`: a fully parenthesised expression of 2^20 - 1 nodes parsed into a
//!   tree and evaluated.
//! * `churn`: a long-lived arena holding a window of 10 000 objects of mixed
//!   sizes; each step drops the oldest and allocates a new one.
#![deny(missing_docs)]

pub mod churn;
pub mod contenders;
pub mod parse;
pub mod suite;

use std::hint::black_box;

pub use contenders::{Arena, Heap, Via};

/// Objects allocated by [`alloc_only`].
pub const ALLOC_ONLY_OBJECTS: usize = 10_000_000;

/// Allocates `objects` small objects of mixed sizes (a cycle of 8, 16, 24,
/// 32 and 48 bytes) from `arena`; returns a checksum.
#[inline(never)]
pub fn alloc_only<A: Arena>(arena: &A, objects: usize) -> u64 {
    let mut sum = 0u64;
    for i in 0..objects as u64 / 5 {
        sum = sum.wrapping_add(*black_box(arena.put(i)));
        black_box(arena.put([i; 2]));
        black_box(arena.put([i; 3]));
        black_box(arena.put([i; 4]));
        black_box(arena.put([i; 6]));
    }
    sum
}

/// Vectors grown by [`vec_growth`].
pub const VEC_GROWTH_VECTORS: usize = 10_000;

/// Grows `vectors` vectors by `push` (lengths cycling through 1..=1000) with
/// `new_vec` and keeps them until the end; returns the total length.
#[macro_export]
macro_rules! vec_growth {
    ($vectors:expr, $new_vec:expr) => {{
        let mut kept = ::std::vec::Vec::with_capacity($vectors);
        for k in 0..$vectors {
            let mut v = $new_vec;
            for i in 0..(k % 1000 + 1) as u64 {
                v.push(i);
            }
            kept.push(::std::hint::black_box(v));
        }
        kept.iter().map(|v| v.len()).sum::<usize>()
    }};
}
