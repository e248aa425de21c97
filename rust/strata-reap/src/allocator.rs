//! `Allocator` for `&Reap`: collections live in a reap and free their memory
//! individually. One body serves the stable `allocator_api2` traits (0.2,
//! 0.3 and 0.4) and, with the `nightly` feature, `core::alloc::Allocator`.

use std::alloc::Layout;
use std::ptr::NonNull;

use crate::{ffi, Reap};

/// Zero-size allocations own no memory (as with `std::alloc::Global`): a
/// dangling, aligned pointer. allocator-api2 0.2's `Vec::shrink_to_fit` on an
/// empty vector shrinks to size 0 and then forgets the pointer, so a real
/// zero-size object would leak until the reap is cleared.
#[inline(always)]
fn dangling(layout: Layout) -> NonNull<u8> {
    // SAFETY: an alignment is never 0.
    unsafe { NonNull::new_unchecked(layout.align() as *mut u8) }
}

impl Reap {
    /// Memory for `layout`, nothing for size 0.
    #[inline(always)]
    pub(crate) fn allocate_object(&self, layout: Layout) -> Option<NonNull<u8>> {
        if layout.size() == 0 {
            return Some(dangling(layout));
        }
        self.try_alloc_layout(layout).ok()
    }

    /// Frees `ptr`'s object with its size (nothing for size 0).
    #[inline]
    pub(crate) unsafe fn deallocate_object(&self, ptr: NonNull<u8>, layout: Layout) {
        self.free(ptr, layout)
    }

    /// A copy of `ptr`'s object in memory fit for `new` (grow or shrink by
    /// moving), freeing the old object.
    unsafe fn move_to(&self, ptr: NonNull<u8>, old: Layout, new: Layout) -> Option<NonNull<u8>> {
        let moved = self.allocate_object(new)?;
        std::ptr::copy_nonoverlapping(ptr.as_ptr(), moved.as_ptr(), old.size().min(new.size()));
        self.deallocate_object(ptr, old);
        Some(moved)
    }

    /// Grows in place when it can (the reap's last object grows at the
    /// bump, as bumpalo's); else moves.
    #[inline]
    pub(crate) unsafe fn grow_object(&self, ptr: NonNull<u8>, old: Layout, new: Layout) -> Option<NonNull<u8>> {
        if old.size() == 0 {
            return self.allocate_object(new);
        }
        if old.align() <= ffi::MIN_ALIGN && new.align() <= ffi::MIN_ALIGN {
            return self.resize(ptr, old.size(), new.size()).ok();
        }
        self.move_to(ptr, old, new)
    }

    /// Shrinks in place (the tail goes back to the reap) unless the new
    /// alignment needs another address.
    pub(crate) unsafe fn shrink_object(&self, ptr: NonNull<u8>, old: Layout, new: Layout) -> Option<NonNull<u8>> {
        if new.size() == 0 {
            self.deallocate_object(ptr, old);
            return Some(dangling(new));
        }
        if old.align() <= ffi::MIN_ALIGN && new.align() <= ffi::MIN_ALIGN {
            return self.resize(ptr, old.size(), new.size()).ok();
        }
        self.move_to(ptr, old, new)
    }
}

macro_rules! reap_allocator {
    ($($trait_path:ident)::+, $error:path) => {
        // SAFETY: memory stays valid until freed through this reap, cleared or
        // dropped; `&'a Reap` keeps the reap alive and un-cleared for 'a.
        // Copies of `&Reap` are the same allocator.
        unsafe impl<'a> $($trait_path)::+ for &'a Reap {
            #[inline(always)]
            fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, $error> {
                match (**self).allocate_object(layout) {
                    Some(ptr) => Ok(NonNull::slice_from_raw_parts(ptr, layout.size())),
                    None => Err($error),
                }
            }

            #[inline]
            unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
                (**self).deallocate_object(ptr, layout)
            }

            unsafe fn grow(&self, ptr: NonNull<u8>, old: Layout, new: Layout) -> Result<NonNull<[u8]>, $error> {
                match (**self).grow_object(ptr, old, new) {
                    Some(moved) => Ok(NonNull::slice_from_raw_parts(moved, new.size())),
                    None => Err($error),
                }
            }

            unsafe fn shrink(&self, ptr: NonNull<u8>, old: Layout, new: Layout) -> Result<NonNull<[u8]>, $error> {
                match (**self).shrink_object(ptr, old, new) {
                    Some(moved) => Ok(NonNull::slice_from_raw_parts(moved, new.size())),
                    None => Err($error),
                }
            }
        }
    };
}

reap_allocator!(allocator_api2::alloc::Allocator, allocator_api2::alloc::AllocError);
reap_allocator!(allocator_api2_03::alloc::Allocator, allocator_api2_03::alloc::AllocError);
reap_allocator!(allocator_api2_04::alloc::Allocator, allocator_api2_04::alloc::AllocError);

#[cfg(feature = "nightly")]
reap_allocator!(core::alloc::Allocator, core::alloc::AllocError);
