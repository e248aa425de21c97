//! Reaps: arenas with bump-pointer speed that can also free single objects.
//!
//! A [`Reap`] is strata's reap (the C library of this repository, compiled by
//! the build script) as a Rust arena. Like `bumpalo` it allocates by bumping a
//! pointer and frees everything at once ([`Reap::clear`], or dropping the
//! reap). Unlike `bumpalo` it also takes back single objects: collections that
//! live in a reap through the [`Allocator`](allocator_api2::alloc::Allocator)
//! implementation of `&Reap` (allocator-api2 0.2, 0.3 and 0.4; `Vec<T, &Reap>`, `Box<T, &Reap>`, hashbrown
//! maps) free their memory when they are dropped or grow, and later
//! allocations reuse it. A long-lived reap with churn therefore stays flat.
//! Reaps nest: [`Reap::scope`] runs a closure with a child reap whose memory
//! goes when the closure returns.
//!
//! ```
//! use strata_reap::Reap;
//! use allocator_api2::vec::Vec;
//!
//! let reap = Reap::new();
//! let point: &mut (i32, i32) = reap.alloc((3, 4));
//! point.0 += 1;
//! let name = reap.alloc_str("strata");
//! let mut squares = Vec::new_in(&reap);
//! squares.extend((0..10u64).map(|i| i * i));
//! let total = reap.scope(|child| {
//!     // Temporary data: freed when the closure returns.
//!     let copy = child.alloc_slice_copy(&squares);
//!     copy.iter().sum::<u64>()
//! });
//! assert_eq!((point.0, &*name, total), (4, "strata", 285));
//! ```
//!
//! # The fast path
//!
//! Every `Reap` is a *sized* reap (`strata_reap_create_sized`): Rust gives
//! the layout back at free, so an object carries no header and no tag, and
//! objects sit side by side in 8-byte steps, as in bumpalo.
//! `include/strata/reap.h` inlines the allocation fast path: the first bytes
//! of every reap are a public, versioned head (`strata_reap_head`), and
//! `strata_reap_malloc_sized` bumps through its sized window. This crate
//! mirrors that inline function in Rust ([`Reap::try_alloc_layout`]), so an
//! allocation inlines into its caller; only the slow path (a new chunk, freed
//! objects waiting for reuse, large or over-aligned objects, checked mode)
//! calls into C. [`Reap::new`] checks that the library's head has the layout
//! version this crate was written for.
//!
//! # Drop policy
//!
//! Values moved into the reap with [`Reap::alloc`] (and the slices of
//! [`Reap::alloc_slice_copy`]) **never have their destructors run**, as in
//! `bumpalo`: their memory goes when the reap is cleared or dropped (or the
//! [`scope`](Reap::scope) that allocated them ends), but `Drop::drop` is not
//! called. A `String` or `Vec` on the global heap placed in a reap with
//! `alloc` therefore leaks its heap buffer. Put such values in a
//! `Box<T, &Reap>` (`allocator_api2::boxed::Box::new_in`) instead: the box
//! runs the destructor when it is dropped and gives its memory back to the
//! reap for reuse.
//!
//! # Threads: `Send`, not `Sync`
//!
//! A reap may move to another thread (`Send`): the C reap belongs to no thread,
//! and all references into it borrow the reap, so none survive the move. It
//! cannot be shared between threads (`!Sync`), because allocation takes `&self`
//! and bumps the head without any synchronisation (that is what makes it
//! fast): two threads allocating through one `&Reap` would race on the bump
//! pointer. `reap.h` says the same: one reap is used by one thread at a time.
//!
//! ```compile_fail
//! fn shared<T: Sync>(_: &T) {}
//! shared(&strata_reap::Reap::new()); // error: `Reap` is not `Sync`
//! ```
//!
//! # Safety story
//!
//! The borrow checker does most of the work: everything allocated from a reap
//! borrows it, so the reap outlives its objects, [`Reap::clear`] (which takes
//! `&mut self`) cannot run while any object is alive, and nothing allocated
//! in a [`scope`](Reap::scope)'s child can leave the closure:
//!
//! ```compile_fail
//! let reap = strata_reap::Reap::new();
//! let escaped = reap.scope(|child| child.alloc(1u32)); // error: borrowed data escapes
//! ```
//!
//! ```compile_fail
//! let mut reap = strata_reap::Reap::new();
//! let x = reap.alloc(1u32);
//! reap.clear(); // error: `reap` is still borrowed by `x`
//! *x += 1;
//! ```
//!
//! What the borrow checker allows but a reap cannot support is documented
//! and fails cleanly (the crate's tests check each):
//! * destructors of values given to `alloc` do not run (see the drop policy);
//!   memory leaked with `mem::forget` from a `Box`/`Vec` in a reap comes back
//!   at `clear` or drop;
//! * out of memory: [`Reap::try_alloc_layout`] and the `Allocator` return an
//!   error (the reap stays usable); [`Reap::alloc`] and friends call
//!   [`handle_alloc_error`], which aborts the
//!   process with a message, as `Box::new` does;
//! * a panic inside [`Reap::scope`] still frees the child reap while
//!   unwinding, and the parent stays usable;
//! * with the environment variable `STRATA_REAP_CHECK=1` the C library checks
//!   every call (foreign pointer, double free, wrong reap) and aborts with a
//!   message; unsafe code that frees through the wrong `&Reap` is caught there.
#![cfg_attr(feature = "nightly", feature(allocator_api))]
#![deny(missing_docs)]

mod allocator;
mod ffi;

use std::alloc::{handle_alloc_error, Layout};
use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// The allocator-api2 crate this one implements `Allocator` for (its `vec::Vec`,
/// `boxed::Box`, …), re-exported so that users need no matching version of their own.
pub use allocator_api2;
pub use allocator_api2::alloc::AllocError;

/// A reap: an arena with bump-pointer allocation, clear, nesting and
/// individual free. See the [crate documentation](crate) for the drop
/// policy, threads and the safety story.
pub struct Reap {
    raw: NonNull<ffi::RawReap>,
    /// `Send` but not `Sync` (see the crate documentation).
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: a C reap belongs to no thread, and every reference into it borrows
// the `Reap`, so moving it to another thread moves its only user.
unsafe impl Send for Reap {}

/// What a reap holds, from [`Reap::stats`] (its child scopes not included).
/// A reap keeps no per-object record, so it counts bytes, not objects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes of the objects currently allocated, each rounded up to 8.
    pub bytes_live: usize,
    /// Bytes the reap holds from the system (chunks, large objects, its header).
    pub bytes_held: usize,
    /// Mappings held from the system (chunks and large objects).
    pub chunks: usize,
}

impl Reap {
    /// A new empty reap.
    ///
    /// Panics when the linked C library has another head layout version, and
    /// calls [`handle_alloc_error`] when the system has no memory for it.
    ///
    /// ```
    /// let reap = strata_reap::Reap::new();
    /// assert_eq!(*reap.alloc(7u8), 7);
    /// ```
    pub fn new() -> Reap {
        Self::create(std::ptr::null_mut())
    }

    fn create(parent: *mut ffi::RawReap) -> Reap {
        // SAFETY: parent is null or a live reap (a `&self`'s).
        let raw = unsafe { ffi::strata_reap_create_sized(parent) };
        let Some(raw) = NonNull::new(raw) else {
            handle_alloc_error(Layout::new::<ffi::Head>());
        };
        let reap = Reap { raw, _not_sync: PhantomData };
        let version = unsafe { (*reap.head()).version };
        assert_eq!(
            version,
            ffi::HEAD_VERSION,
            "strata-reap: the C library's reap head has layout version {version}, this crate reads version {}",
            ffi::HEAD_VERSION
        );
        reap
    }

    #[inline(always)]
    fn head(&self) -> *mut ffi::Head {
        self.raw.as_ptr().cast()
    }

    /// The head's sized window, which the inline path bumps.
    #[inline(always)]
    fn cursor(&self) -> *mut ffi::SizedCursor {
        // SAFETY: the head is the first bytes of a live reap.
        unsafe { std::ptr::addr_of_mut!((*self.head()).sized) }
    }

    /// Moves `value` into the reap and returns a reference to it, valid while
    /// the reap lives (and is not cleared). Any alignment, over-aligned types
    /// included. The value's destructor never runs (see the drop policy).
    ///
    /// ```
    /// #[repr(align(64))]
    /// struct Line([u8; 64]);
    /// let reap = strata_reap::Reap::new();
    /// let line = reap.alloc(Line([1; 64]));
    /// assert_eq!(line as *mut Line as usize % 64, 0);
    /// ```
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub fn alloc<T>(&self, value: T) -> &mut T {
        let ptr = if std::mem::size_of::<T>() == 0 {
            NonNull::<T>::dangling()
        } else {
            self.alloc_layout(Layout::new::<T>()).cast::<T>()
        };
        // SAFETY: fresh memory for a T, borrowed for as long as `self`.
        unsafe {
            ptr.as_ptr().write(value);
            &mut *ptr.as_ptr()
        }
    }

    /// Copies `s` into the reap.
    ///
    /// ```
    /// let reap = strata_reap::Reap::new();
    /// let s = reap.alloc_str("hello");
    /// s.make_ascii_uppercase();
    /// assert_eq!(s, "HELLO");
    /// ```
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub fn alloc_str(&self, s: &str) -> &mut str {
        let bytes = self.alloc_slice_copy(s.as_bytes());
        // SAFETY: a byte-for-byte copy of a str.
        unsafe { std::str::from_utf8_unchecked_mut(bytes) }
    }

    /// Copies `src` into the reap.
    ///
    /// ```
    /// let reap = strata_reap::Reap::new();
    /// let v = reap.alloc_slice_copy(&[1u32, 2, 3]);
    /// v[0] = 10;
    /// assert_eq!(v, &[10, 2, 3]);
    /// ```
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub fn alloc_slice_copy<T: Copy>(&self, src: &[T]) -> &mut [T] {
        let layout = Layout::for_value(src);
        let ptr = if layout.size() == 0 { NonNull::<T>::dangling() } else { self.alloc_layout(layout).cast::<T>() };
        // SAFETY: fresh memory for src.len() Ts; T: Copy.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), ptr.as_ptr(), src.len());
            std::slice::from_raw_parts_mut(ptr.as_ptr(), src.len())
        }
    }

    /// Memory for `layout`; calls [`handle_alloc_error`] when there is none.
    /// The memory is uninitialised and stays valid until the reap is cleared
    /// or dropped.
    #[inline(always)]
    pub fn alloc_layout(&self, layout: Layout) -> NonNull<u8> {
        match self.try_alloc_layout(layout) {
            Ok(ptr) => ptr,
            Err(AllocError) => out_of_memory(layout),
        }
    }

    /// Memory for `layout`, or [`AllocError`] (the reap stays usable). A size
    /// of 0 gives a unique pointer.
    ///
    /// This is `strata_reap_malloc_sized` of `reap.h` in Rust: bump within
    /// the head's sized window, nothing else; anything else is one call into
    /// the C library away.
    #[inline(always)]
    pub fn try_alloc_layout(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        if layout.align() > ffi::MIN_ALIGN {
            return self.alloc_aligned(layout);
        }
        let size = layout.size();
        let cursor = self.cursor();
        // SAFETY: the head is the first bytes of a live reap, and `Reap` is
        // not Sync, so no other thread touches it.
        unsafe {
            let object = (*cursor).bump;
            // Size 0 and absurd sizes wrap `slot - 1` to huge: the C library's.
            let slot = slot_of(size);
            if slot.wrapping_sub(1) < ffi::SIZED_MAX_SLOT && slot.wrapping_sub(1) < (*cursor).limit.wrapping_sub(object)
            {
                (*cursor).bump = object + slot;
                // As strata/reap.h: the stream ahead into L1 (a prefetch
                // never faults).
                #[cfg(target_arch = "x86_64")]
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    (object + ffi::PREFETCH_AHEAD) as *const i8,
                );
                // An open window is never at address 0.
                return Ok(NonNull::new_unchecked(object as *mut u8));
            }
        }
        self.alloc_slow(size)
    }

    #[cold]
    #[inline(never)]
    fn alloc_slow(&self, size: usize) -> Result<NonNull<u8>, AllocError> {
        // SAFETY: a live reap.
        NonNull::new(unsafe { ffi::strata_reap_malloc_sized_slow(self.raw.as_ptr(), size) }).ok_or(AllocError)
    }

    #[inline(never)]
    fn alloc_aligned(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        // SAFETY: a live reap; the alignment is a power of two.
        let ptr = unsafe { ffi::strata_reap_aligned_alloc(self.raw.as_ptr(), layout.align(), layout.size()) };
        NonNull::new(ptr).ok_or(AllocError)
    }

    /// Runs `f` with a child reap, whose memory goes when `f` returns (or
    /// unwinds). Scopes nest; the parent stays usable inside the closure, and
    /// nothing allocated from the child can leave it.
    ///
    /// ```
    /// let reap = strata_reap::Reap::new();
    /// let kept = reap.alloc(1u64);
    /// let depth = reap.scope(|a| a.scope(|b| *b.alloc(2u64) + *a.alloc(3u64)));
    /// assert_eq!((*kept, depth), (1, 5));
    /// ```
    pub fn scope<R>(&self, f: impl FnOnce(&Reap) -> R) -> R {
        // The child is destroyed by its Drop, also while unwinding.
        let child = Reap::create(self.raw.as_ptr());
        f(&child)
    }

    /// Frees every object of the reap at once; the reap keeps its chunks
    /// (up to what it used) for the next round.
    ///
    /// ```
    /// let mut reap = strata_reap::Reap::new();
    /// for i in 0..1000u64 { reap.alloc(i); }
    /// assert_eq!(reap.stats().bytes_live, 8000);
    /// reap.clear();
    /// assert_eq!(reap.stats().bytes_live, 0);
    /// ```
    pub fn clear(&mut self) {
        // SAFETY: `&mut self`: nothing borrows the reap's memory any more.
        unsafe { ffi::strata_reap_clear(self.raw.as_ptr()) }
    }

    /// What the reap holds now (its child scopes not included).
    ///
    /// ```
    /// let reap = strata_reap::Reap::new();
    /// reap.alloc([0u8; 100]);
    /// let stats = reap.stats();
    /// assert_eq!(stats.bytes_live, 104); // 100 rounded up to 8
    /// assert!(stats.bytes_held >= stats.bytes_live);
    /// ```
    pub fn stats(&self) -> Stats {
        let mut raw = ffi::RawStats::default();
        // SAFETY: a live reap; raw is writable.
        unsafe { ffi::strata_reap_get_stats(self.raw.as_ptr(), &mut raw) };
        Stats { bytes_live: raw.bytes_live, bytes_held: raw.bytes_held, chunks: raw.chunks }
    }

    /// Gives one object back to the reap; later allocations reuse its memory.
    /// Collections do this through the `Allocator` implementation. A size of
    /// 0 frees nothing (it owns no memory).
    ///
    /// # Safety
    /// `ptr` must be a live object allocated from this reap with `layout`
    /// (by [`Reap::alloc_layout`] or [`Reap::try_alloc_layout`]), not used after.
    pub unsafe fn free(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() != 0 {
            ffi::strata_reap_free_sized(self.raw.as_ptr(), ptr.as_ptr(), layout.size())
        }
    }

    /// Resizes an object aligned to at most 8 bytes: the object the reap
    /// bumped last grows or shrinks where it is (inline when the window
    /// allows), others shrink in place or move.
    #[inline]
    unsafe fn resize(&self, ptr: NonNull<u8>, old: usize, new: usize) -> Result<NonNull<u8>, AllocError> {
        let cursor = self.cursor();
        let object = ptr.as_ptr() as usize;
        let (old_slot, new_slot) = (slot_of(old), slot_of(new));
        // The last object, grown within the open window: the bump moves.
        // (An open window only: a closed one keeps limit == bump.)
        if object + old_slot == (*cursor).bump
            && (*cursor).flags == 0
            && new_slot.wrapping_sub(1) < ffi::SIZED_MAX_SLOT
            && old_slot.wrapping_sub(1) < ffi::SIZED_MAX_SLOT
            && new_slot <= (*cursor).limit - object
        {
            (*cursor).bump = object + new_slot;
            return Ok(ptr);
        }
        NonNull::new(ffi::strata_reap_realloc_sized(self.raw.as_ptr(), ptr.as_ptr(), old, new)).ok_or(AllocError)
    }
}

/// The slot of `size` bytes (0 for size 0: the library's).
#[inline(always)]
fn slot_of(size: usize) -> usize {
    size.wrapping_add(ffi::SIZED_GRANULE - 1) & !(ffi::SIZED_GRANULE - 1)
}

#[cold]
#[inline(never)]
fn out_of_memory(layout: Layout) -> ! {
    handle_alloc_error(layout)
}

impl Default for Reap {
    /// The same as [`Reap::new`].
    fn default() -> Reap {
        Reap::new()
    }
}

impl Drop for Reap {
    /// Frees the reap's memory (destructors of values given to `alloc` are
    /// not run).
    fn drop(&mut self) {
        // SAFETY: the reap is live, and nothing borrows it any more.
        unsafe { ffi::strata_reap_destroy(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for Reap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reap").field("raw", &self.raw).field("stats", &self.stats()).finish()
    }
}

/// The README's examples are doc tests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
