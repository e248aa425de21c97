//! libstrata as Rust's global allocator.
//!
//! [`Strata`] is a [`GlobalAlloc`] over strata's thread-safe malloc (the Vam
//! design, `src/malloc` of this repository, compiled by the build script with
//! only its prefixed `strata_*` names: the C `malloc` of the process is left
//! alone). Use it as the `mimalloc` crate is used:
//!
//! ```
//! use strata_alloc::Strata;
//!
//! #[global_allocator]
//! static GLOBAL: Strata = Strata;
//!
//! let v: Vec<u32> = (0..1000).collect();
//! assert_eq!(v.iter().sum::<u32>(), 499_500);
//! ```
//!
//! Alignments up to 16 bytes (every malloc result is 16-byte aligned) use
//! `strata_malloc`, `strata_calloc` and `strata_realloc`; larger ones use
//! `strata_aligned_alloc`, and `realloc` of such a block moves it by hand.
//! The per-thread heap pointer lives in initial-exec TLS, as in libstrata:
//! link the crate into executables (or libraries loaded at start-up), not
//! into a shared library opened later with `dlopen`.
#![no_std]
#![deny(missing_docs)]

use core::alloc::{GlobalAlloc, Layout};
use core::ptr;

/// Every result of strata_malloc is aligned to 16 bytes.
const MIN_ALIGN: usize = 16;

extern "C" {
    fn strata_malloc(size: usize) -> *mut u8;
    fn strata_free(ptr: *mut u8);
    fn strata_calloc(count: usize, size: usize) -> *mut u8;
    fn strata_realloc(ptr: *mut u8, size: usize) -> *mut u8;
    fn strata_aligned_alloc(alignment: usize, size: usize) -> *mut u8;
    fn strata_usable_size(ptr: *const u8) -> usize;
}

/// libstrata as a [`GlobalAlloc`]: `#[global_allocator] static A: Strata = Strata;`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Strata;

impl Strata {
    /// Bytes usable at `ptr` (at least the size it was allocated with).
    ///
    /// # Safety
    /// `ptr` must be a live block of this allocator.
    pub unsafe fn usable_size(&self, ptr: *const u8) -> usize {
        strata_usable_size(ptr)
    }
}

#[inline(always)]
fn malloc_aligned_enough(layout: &Layout) -> bool {
    layout.align() <= MIN_ALIGN
}

// SAFETY: libstrata is a thread-safe malloc; every block is freed with
// strata_free, whichever call made it.
unsafe impl GlobalAlloc for Strata {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if malloc_aligned_enough(&layout) {
            strata_malloc(layout.size())
        } else {
            strata_aligned_alloc(layout.align(), layout.size())
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        strata_free(ptr)
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if malloc_aligned_enough(&layout) {
            return strata_calloc(1, layout.size());
        }
        let ptr = strata_aligned_alloc(layout.align(), layout.size());
        if !ptr.is_null() {
            ptr::write_bytes(ptr, 0, layout.size());
        }
        ptr
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if malloc_aligned_enough(&layout) {
            return strata_realloc(ptr, new_size);
        }
        let new = strata_aligned_alloc(layout.align(), new_size);
        if !new.is_null() {
            ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
            strata_free(ptr);
        }
        new
    }
}
