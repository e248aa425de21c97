//! Every API of strata-reap: alloc, alloc_str, alloc_slice_copy, alignment,
//! scopes, clear, stats, Send, and collections living in a reap.
use std::alloc::Layout;

use allocator_api2::boxed::Box;
use allocator_api2::vec::Vec;
use strata_reap::Reap;

#[test]
fn alloc_keeps_values_apart() {
    let reap = Reap::new();
    let refs: std::vec::Vec<&mut u64> = (0..10_000u64).map(|i| reap.alloc(i * 3)).collect();
    for (i, r) in refs.iter().enumerate() {
        assert_eq!(**r, i as u64 * 3);
    }
    assert_eq!(reap.stats().bytes_live, 80_000, "8 bytes a u64, nothing more");
}

#[test]
fn alloc_of_every_small_size_gets_its_own_bytes() {
    let reap = Reap::new();
    let mut slices = std::vec::Vec::new();
    for size in 0..300usize {
        let fill = (size % 251) as u8;
        slices.push(reap.alloc_slice_copy(&vec![fill; size][..]));
    }
    for (size, s) in slices.iter().enumerate() {
        assert_eq!(s.len(), size);
        assert!(s.iter().all(|&b| b == (size % 251) as u8), "size {size} was overwritten");
    }
}

#[test]
fn alloc_str_and_slices_copy() {
    let reap = Reap::new();
    let s = reap.alloc_str("héllo, reap");
    assert_eq!(s, "héllo, reap");
    let empty = reap.alloc_str("");
    assert_eq!(empty, "");
    let v = reap.alloc_slice_copy(&[1.5f64, -2.0, 3.25]);
    v[1] = 8.0;
    assert_eq!(v, &[1.5, 8.0, 3.25]);
    let none: &mut [u32] = reap.alloc_slice_copy(&[]);
    assert!(none.is_empty());
}

#[test]
fn zero_sized_values() {
    let reap = Reap::new();
    let unit: &mut () = reap.alloc(());
    *unit = ();
    let zsts = reap.alloc_slice_copy(&[(); 5]);
    assert_eq!(zsts.len(), 5);
}

macro_rules! aligned_types {
    ($($name:ident = $align:literal),*) => {
        $( #[derive(Clone, Copy)] #[repr(align($align))] struct $name(u8); )*
        pub fn check_every_aligned_type(reap: &Reap) {
            $(
                for i in 0..4u8 {
                    let v = reap.alloc($name(i));
                    assert_eq!(v as *mut $name as usize % $align, 0, "align {}", $align);
                    assert_eq!(v.0, i);
                    let s = reap.alloc_slice_copy(&[$name(i); 3]);
                    assert_eq!(s.as_ptr() as usize % $align, 0, "slice align {}", $align);
                    reap.alloc(1u8); // knock the bump pointer off alignment
                }
            )*
        }
    };
}
#[allow(clippy::modulo_one)] // align 1 is one of the powers of two checked
mod aligned {
    use super::Reap;
    aligned_types!(
        A1 = 1,
        A2 = 2,
        A4 = 4,
        A8 = 8,
        A16 = 16,
        A32 = 32,
        A64 = 64,
        A128 = 128,
        A256 = 256,
        A512 = 512,
        A1024 = 1024,
        A2048 = 2048,
        A4096 = 4096
    );
}
use aligned::check_every_aligned_type;

#[test]
fn every_power_of_two_alignment_up_to_4096() {
    let reap = Reap::new();
    check_every_aligned_type(&reap);
    reap.scope(check_every_aligned_type);
    for shift in 0..=12 {
        let align = 1usize << shift;
        for size in [0, 1, align, 3 * align + 5] {
            let layout = Layout::from_size_align(size, align).unwrap();
            let p = reap.try_alloc_layout(layout).unwrap();
            assert_eq!(p.as_ptr() as usize % align, 0, "layout {layout:?}");
            let b = Box::new_in([0u8; 7], &reap);
            drop(b);
        }
    }
}

#[test]
fn scopes_nest_100_deep_and_free_their_memory() {
    fn descend(reap: &Reap, depth: usize, trail: &mut std::vec::Vec<usize>) {
        let mine = reap.alloc(depth);
        let bulk = reap.alloc_slice_copy(&[depth as u8; 1000]);
        if depth < 100 {
            reap.scope(|child| descend(child, depth + 1, trail));
        }
        assert_eq!(*mine, depth);
        assert!(bulk.iter().all(|&b| b == depth as u8));
        trail.push(depth);
    }
    let reap = Reap::new();
    let before = reap.stats();
    let mut trail = std::vec::Vec::new();
    reap.scope(|child| descend(child, 1, &mut trail));
    assert_eq!(trail, (1..=100).rev().collect::<std::vec::Vec<_>>());
    assert_eq!(reap.stats(), before, "the children's memory is not the parent's");
}

#[test]
fn scope_can_use_the_parent_and_returns_a_value() {
    let reap = Reap::new();
    let kept = reap.scope(|child| {
        let tmp = child.alloc_slice_copy(&[2u32; 10]);
        reap.alloc(tmp.iter().sum::<u32>())
    });
    assert_eq!(*kept, 20);
    assert_eq!(reap.stats().bytes_live, 8, "a u32 takes one 8-byte slot");
}

#[test]
fn repeated_scopes_do_not_grow_the_parent() {
    let reap = Reap::new();
    reap.scope(|c| {
        c.alloc_slice_copy(&[0u8; 50_000]);
    });
    let held = reap.stats().bytes_held;
    for _ in 0..1000 {
        reap.scope(|c| {
            c.alloc_slice_copy(&[0u8; 50_000]);
        });
    }
    assert_eq!(reap.stats().bytes_held, held);
}

#[test]
fn clear_frees_everything_and_the_reap_goes_on() {
    let mut reap = Reap::new();
    for round in 0..5u64 {
        for i in 0..100_000u64 {
            reap.alloc(i + round);
        }
        assert_eq!(reap.stats().bytes_live, 800_000);
        let held = reap.stats().bytes_held;
        reap.clear();
        let after = reap.stats();
        assert_eq!(after.bytes_live, 0);
        assert!(after.bytes_held <= held);
    }
    let v = reap.alloc_str("after clear");
    assert_eq!(v, "after clear");
}

#[test]
fn collections_live_in_a_reap() {
    let reap = Reap::new();
    let mut v: Vec<String, &Reap> = Vec::new_in(&reap);
    for i in 0..1000 {
        v.push(format!("item {i}"));
    }
    assert_eq!(v[999], "item 999");
    let b = Box::new_in([7u64; 32], &reap);
    assert_eq!(b.iter().sum::<u64>(), 7 * 32);
    let mut map = hashbrown::HashMap::new_in(&reap);
    for i in 0..5000u32 {
        map.insert(i, i.wrapping_mul(2654435761));
    }
    assert_eq!(map.len(), 5000);
    assert_eq!(map[&1234], 1234u32.wrapping_mul(2654435761));
    map.retain(|k, _| k % 2 == 0);
    assert_eq!(map.len(), 2500);
    let mut set = hashbrown::HashSet::new_in(&reap);
    set.extend(v.iter().map(|s| s.len()));
    assert!(set.contains(&8));
}

#[test]
fn dropped_collections_give_memory_back_for_reuse() {
    let reap = Reap::new();
    let mut v: Vec<u64, &Reap> = Vec::new_in(&reap);
    v.extend(0..100_000);
    let held = reap.stats().bytes_held;
    drop(v);
    assert_eq!(reap.stats().bytes_live, 0);
    for _ in 0..50 {
        let mut w: Vec<u64, &Reap> = Vec::with_capacity_in(100_000, &reap);
        w.extend(0..100_000);
        let boxes: std::vec::Vec<Box<[u8; 48], &Reap>> = (0..1000).map(|_| Box::new_in([1; 48], &reap)).collect();
        drop(boxes);
    }
    assert!(reap.stats().bytes_held <= 2 * held, "reuse keeps the reap flat");
}

#[test]
fn boxes_run_destructors_and_alloc_does_not() {
    // Counts drops without touching the heap (so no leak for LeakSanitizer).
    struct Counted<'c>(&'c std::cell::Cell<usize>);
    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }
    let drops = std::cell::Cell::new(0);
    let reap = Reap::new();
    let boxed = Box::new_in(Counted(&drops), &reap);
    let placed = reap.alloc(Counted(&drops));
    drop(boxed);
    assert_eq!(drops.get(), 1, "Box<T, &Reap> runs the destructor");
    let _ = placed;
    drop(reap);
    assert_eq!(drops.get(), 1, "alloc never runs the destructor (documented)");
}

#[test]
fn vec_growth_and_shrink_keep_contents() {
    let reap = Reap::new();
    let mut v: Vec<u32, &Reap> = Vec::new_in(&reap);
    for i in 0..200_000u32 {
        v.push(i);
    }
    v.truncate(10);
    v.shrink_to_fit();
    assert_eq!(&v[..], &(0..10).collect::<std::vec::Vec<_>>()[..]);
    #[derive(Clone, Copy, PartialEq, Debug)]
    #[repr(align(256))]
    struct Wide(u32);
    let mut w: Vec<Wide, &Reap> = Vec::new_in(&reap);
    for i in 0..500 {
        w.push(Wide(i));
        assert_eq!(w.as_ptr() as usize % 256, 0);
    }
    w.truncate(3);
    w.shrink_to_fit();
    assert_eq!(&w[..], &[Wide(0), Wide(1), Wide(2)]);
}

#[test]
fn a_reap_moves_to_another_thread() {
    let reap = Reap::new();
    let handle = std::thread::spawn(move || {
        let sum: u64 = (0..1000u64).map(|i| *reap.alloc(i)).sum();
        (sum, reap)
    });
    let (sum, reap) = handle.join().unwrap();
    assert_eq!(sum, 499_500);
    assert_eq!(reap.stats().bytes_live, 8000);
}

#[test]
fn default_and_debug() {
    let reap = Reap::default();
    reap.alloc(1u8);
    assert!(format!("{reap:?}").contains("bytes_live: 8"));
}

#[test]
fn the_reexported_allocator_api2_is_the_one_implemented() {
    let reap = Reap::new();
    let mut v = strata_reap::allocator_api2::vec::Vec::new_in(&reap);
    v.push(1u8);
    assert_eq!(v.len(), 1);
}

#[test]
fn every_allocator_api2_line_is_implemented() {
    let reap = Reap::new();
    let mut v3 = allocator_api2_03::vec::Vec::new_in(&reap);
    v3.extend(0..100u32);
    let mut v4 = allocator_api2_04::vec::Vec::new_in(&reap);
    v4.extend(0..100u32);
    let b4 = allocator_api2_04::boxed::Box::new_in(5u64, &reap);
    assert_eq!((v3.iter().sum::<u32>(), v4.iter().sum::<u32>(), *b4), (4950, 4950, 5));
    assert_eq!(reap.stats().bytes_live, v3.capacity() * 4 + v4.capacity() * 4 + 8);
    drop((v3, v4, b4));
    assert_eq!(reap.stats().bytes_live, 0);
}

#[test]
fn objects_sit_side_by_side_in_8_byte_steps() {
    // No tag, no header: as in bumpalo, an object of a multiple of 8 bytes
    // takes exactly its size, and the next one starts right after it.
    let reap = Reap::new();
    let mut last = reap.alloc_layout(Layout::from_size_align(8, 8).unwrap()).as_ptr() as usize;
    for size in [8usize, 16, 24, 32, 48, 1, 7, 9] {
        let ptr = reap.alloc_layout(Layout::from_size_align(size, 8).unwrap()).as_ptr() as usize;
        assert_eq!(ptr % 8, 0);
        if ptr != 0 && last != 0 && ptr > last && ptr - last < 4096 {
            assert!(ptr - last <= 48 && (ptr - last) % 8 == 0, "size {size}: {} bytes after the last", ptr - last);
        }
        last = ptr;
    }
    let before = reap.stats().bytes_live;
    for size in 1..600usize {
        reap.alloc_layout(Layout::from_size_align(size, 8).unwrap());
    }
    let expected: usize = (1..600usize).map(|s| s.div_ceil(8) * 8).sum();
    assert_eq!(reap.stats().bytes_live - before, expected);
}

#[test]
fn the_last_object_grows_in_place() {
    // Vec growth at the bump: the buffer stays where it is, as bumpalo's does.
    let reap = Reap::new();
    // A checked reap (STRATA_REAP_CHECK, always under ASan) records each
    // object's size, so it moves instead.
    let checked = cfg!(strata_reap_asan) || std::env::var_os("STRATA_REAP_CHECK").is_some_and(|v| v != "0");
    let mut v: Vec<u64, &Reap> = Vec::with_capacity_in(4, &reap);
    v.push(1);
    let first = v.as_ptr();
    v.extend(0..1000);
    assert!(checked || v.as_ptr() == first, "the reap's last object grew where it was");
    assert_eq!(reap.stats().bytes_live, v.capacity() * 8);
    let grown = v.as_ptr();
    v.truncate(10);
    v.shrink_to_fit();
    assert!(checked || v.as_ptr() == grown, "and shrank where it was");
    assert_eq!((v[9], reap.stats().bytes_live), (8, 80));
}

#[test]
fn freeing_with_the_layout_gives_the_memory_back() {
    let reap = Reap::new();
    let layout = Layout::from_size_align(40, 8).unwrap();
    let keep = reap.alloc_layout(layout);
    let a = reap.alloc_layout(layout);
    let _guard = reap.alloc_layout(layout);
    unsafe { reap.free(a, layout) };
    assert_eq!(reap.stats().bytes_live, 80);
    // The freed object waits; a request of its size takes it once enough wait
    // or the run ends, so here it may or may not come back at once: the
    // memory held stays what it was either way.
    let held = reap.stats().bytes_held;
    for _ in 0..100_000 {
        let p = reap.alloc_layout(layout);
        unsafe { reap.free(p, layout) };
    }
    assert_eq!(reap.stats().bytes_held, held, "alloc/free pairs stay in place");
    unsafe { reap.free(keep, layout) };
    assert_eq!(reap.stats().bytes_live, 40);
}
