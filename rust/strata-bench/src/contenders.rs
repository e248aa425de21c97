//! The contenders: arenas with one `put`, and `Box` on a global allocator.
use std::alloc::{GlobalAlloc, Layout};
use std::cell::RefCell;
use std::ptr::NonNull;

use allocator_api2::alloc::{AllocError, Allocator};

/// An arena that places values and hands back references living as long as
/// the arena (no destructors run).
pub trait Arena {
    /// The name in tables.
    const NAME: &'static str;
    /// A new, empty arena.
    fn new() -> Self;
    /// Moves `value` into the arena.
    #[allow(clippy::mut_from_ref)]
    fn put<T>(&self, value: T) -> &mut T;
}

impl Arena for strata_reap::Reap {
    const NAME: &'static str = "strata-reap";
    fn new() -> Self {
        strata_reap::Reap::new()
    }
    #[inline(always)]
    fn put<T>(&self, value: T) -> &mut T {
        self.alloc(value)
    }
}

impl Arena for bumpalo::Bump {
    const NAME: &'static str = "bumpalo";
    fn new() -> Self {
        bumpalo::Bump::new()
    }
    #[inline(always)]
    fn put<T>(&self, value: T) -> &mut T {
        self.alloc(value)
    }
}

impl Arena for bump_scope::Bump {
    const NAME: &'static str = "bump-scope";
    fn new() -> Self {
        bump_scope::Bump::new()
    }
    #[inline(always)]
    fn put<T>(&self, value: T) -> &mut T {
        bump_scope::BumpBox::leak(self.alloc(value))
    }
}

/// A global allocator (`System`, `MiMalloc`, `Strata`) as an
/// allocator-api2 `Allocator`, so that `Box<T, Via<G>>` and `Vec<T, Via<G>>`
/// use it within one benchmark binary.
pub struct Via<G: 'static>(pub &'static G);

impl<G> Clone for Via<G> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<G> Copy for Via<G> {}

impl<G: Named> Via<G> {
    /// The allocator `G` as an `Allocator`.
    pub fn new() -> Self {
        Via(G::instance())
    }
}

impl<G: Named> Default for Via<G> {
    fn default() -> Self {
        Via::new()
    }
}

// SAFETY: forwards to a GlobalAlloc; zero-size allocations own no memory.
unsafe impl<G: GlobalAlloc> Allocator for Via<G> {
    #[inline(always)]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if layout.size() == 0 {
            let dangling = unsafe { NonNull::new_unchecked(layout.align() as *mut u8) };
            return Ok(NonNull::slice_from_raw_parts(dangling, 0));
        }
        let ptr = NonNull::new(unsafe { self.0.alloc(layout) }).ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(ptr, layout.size()))
    }

    #[inline(always)]
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() != 0 {
            self.0.dealloc(ptr.as_ptr(), layout)
        }
    }

    unsafe fn grow(&self, ptr: NonNull<u8>, old: Layout, new: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if old.size() == 0 || old.align() != new.align() {
            let moved = self.allocate(new)?;
            std::ptr::copy_nonoverlapping(ptr.as_ptr(), moved.as_ptr().cast::<u8>(), old.size());
            self.deallocate(ptr, old);
            return Ok(moved);
        }
        let ptr = NonNull::new(self.0.realloc(ptr.as_ptr(), old, new.size())).ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(ptr, new.size()))
    }
}

/// `Box` on the global allocator `G`: each `put` is one allocation, each
/// object is freed one by one when the heap is dropped.
pub struct Heap<G: GlobalAlloc + 'static> {
    alloc: &'static G,
    objects: RefCell<Vec<(NonNull<u8>, Layout)>>,
}

/// A global allocator of the benchmarks: its name and its one instance.
pub trait Named: GlobalAlloc + 'static {
    /// The name in tables.
    const NAME: &'static str;
    /// The allocator.
    fn instance() -> &'static Self;
}

macro_rules! named {
    ($ty:ty, $name:literal, $value:expr) => {
        impl Named for $ty {
            const NAME: &'static str = $name;
            fn instance() -> &'static Self {
                static INSTANCE: $ty = $value;
                &INSTANCE
            }
        }
    };
}
named!(std::alloc::System, "Box (system)", std::alloc::System);
named!(mimalloc::MiMalloc, "Box (mimalloc)", mimalloc::MiMalloc);
named!(strata_alloc::Strata, "Box (strata-alloc)", strata_alloc::Strata);

impl<G: Named> Arena for Heap<G> {
    const NAME: &'static str = G::NAME;
    fn new() -> Self {
        Heap { alloc: G::instance(), objects: RefCell::new(Vec::new()) }
    }
    #[inline(always)]
    fn put<T>(&self, value: T) -> &mut T {
        let layout = Layout::new::<T>();
        let ptr =
            NonNull::new(unsafe { self.alloc.alloc(layout) }).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        self.objects.borrow_mut().push((ptr, layout));
        let ptr = ptr.cast::<T>().as_ptr();
        unsafe {
            ptr.write(value);
            &mut *ptr
        }
    }
}

impl<G: GlobalAlloc> Drop for Heap<G> {
    fn drop(&mut self) {
        for (ptr, layout) in self.objects.get_mut().drain(..) {
            unsafe { self.alloc.dealloc(ptr.as_ptr(), layout) }
        }
    }
}

/// typed-arena holds one type per arena: one arena for each object size of
/// [`crate::alloc_only`].
#[derive(Default)]
pub struct TypedArenas {
    a8: typed_arena::Arena<u64>,
    a16: typed_arena::Arena<[u64; 2]>,
    a24: typed_arena::Arena<[u64; 3]>,
    a32: typed_arena::Arena<[u64; 4]>,
    a48: typed_arena::Arena<[u64; 6]>,
}

impl TypedArenas {
    /// The name in tables.
    pub const NAME: &'static str = "typed-arena";

    /// [`crate::alloc_only`] on five typed arenas.
    #[inline(never)]
    pub fn alloc_only(&self, objects: usize) -> u64 {
        use std::hint::black_box;
        let mut sum = 0u64;
        for i in 0..objects as u64 / 5 {
            sum = sum.wrapping_add(*black_box(self.a8.alloc(i)));
            black_box(self.a16.alloc([i; 2]));
            black_box(self.a24.alloc([i; 3]));
            black_box(self.a32.alloc([i; 4]));
            black_box(self.a48.alloc([i; 6]));
        }
        sum
    }
}
