//! The C API of `include/strata/reap.h`, as compiled by build.rs.
//!
//! Only the out-of-line calls live here: the inline bump of
//! `strata_reap_malloc_sized` is mirrored in Rust by `Reap::try_alloc_layout`.

/// An opaque C reap (`struct strata_reap`); its first bytes are a [`Head`].
#[repr(C)]
pub(crate) struct RawReap {
    _opaque: [u8; 0],
}

/// `strata_reap_head`: the public head every reap starts with (layout
/// version [`HEAD_VERSION`]). The library keeps `limit == bump` whenever the
/// inline window is closed (`flags != 0`), so the inline path only compares.
#[repr(C)]
pub(crate) struct Head {
    pub bump: usize,
    pub limit: usize,
    pub flags: u32,
    pub version: u32,
    /// The sized reap's window (`strata_reap_sized_cursor`): the one this
    /// crate bumps through, since every `Reap` is a sized reap.
    pub sized: SizedCursor,
}

/// `strata_reap_sized_cursor`: same rules as the tagged window.
#[repr(C)]
pub(crate) struct SizedCursor {
    pub bump: usize,
    pub limit: usize,
    pub flags: u32,
    pub reserved: u32,
}

/// `STRATA_REAP_HEAD_VERSION`: the head layout this crate was written for.
pub(crate) const HEAD_VERSION: u32 = 3;

// SIZED_GRANULE, SIZED_MAX_SLOT, PREFETCH_AHEAD: read from reap.h by build.rs.
include!(concat!(env!("OUT_DIR"), "/contract.rs"));

/// Every result of the (sized) reap is aligned to at least this many bytes.
pub(crate) const MIN_ALIGN: usize = SIZED_GRANULE;

/// `STRATA_REAP_UNCOUNTED`: a sized reap does not count its objects.
#[allow(dead_code)]
pub(crate) const UNCOUNTED: usize = usize::MAX;

/// `strata_reap_stats`.
#[repr(C)]
#[derive(Default)]
pub(crate) struct RawStats {
    pub bytes_live: usize,
    pub objects_live: usize,
    pub bytes_held: usize,
    pub chunks: usize,
}

extern "C" {
    pub(crate) fn strata_reap_create_sized(parent: *mut RawReap) -> *mut RawReap;
    pub(crate) fn strata_reap_destroy(reap: *mut RawReap);
    pub(crate) fn strata_reap_clear(reap: *mut RawReap);
    pub(crate) fn strata_reap_malloc_sized_slow(reap: *mut RawReap, size: usize) -> *mut u8;
    pub(crate) fn strata_reap_realloc_sized(
        reap: *mut RawReap,
        ptr: *mut u8,
        old_size: usize,
        new_size: usize,
    ) -> *mut u8;
    pub(crate) fn strata_reap_aligned_alloc(reap: *mut RawReap, alignment: usize, size: usize) -> *mut u8;
    pub(crate) fn strata_reap_free_sized(reap: *mut RawReap, ptr: *mut u8, size: usize);
    pub(crate) fn strata_reap_get_stats(reap: *const RawReap, stats: *mut RawStats);
}
