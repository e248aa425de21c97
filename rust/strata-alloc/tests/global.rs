//! strata_alloc::Strata as the global allocator of this test binary: every
//! allocation below goes through libstrata.
use std::alloc::{GlobalAlloc, Layout};
use std::collections::{BTreeMap, HashMap};

use strata_alloc::Strata;

#[global_allocator]
static GLOBAL: Strata = Strata;

#[test]
fn collections_work_on_strata() {
    let mut map: HashMap<String, Vec<u64>> = HashMap::new();
    for i in 0..10_000u64 {
        map.entry(format!("k{}", i % 997)).or_default().push(i);
    }
    assert_eq!(map.len(), 997);
    assert_eq!(map.values().map(Vec::len).sum::<usize>(), 10_000);
    let tree: BTreeMap<u64, Box<[u8]>> = (0..5000).map(|i| (i, vec![i as u8; (i % 300) as usize].into())).collect();
    assert!(tree.iter().all(|(&k, v)| v.len() == (k % 300) as usize && v.iter().all(|&b| b == k as u8)));
}

#[test]
fn blocks_come_from_libstrata() {
    let b = Box::new([0u8; 100]);
    // strata_usable_size knows the block: it is libstrata's, not glibc's.
    let usable = unsafe { Strata.usable_size(b.as_ptr()) };
    assert!(usable >= 100);
}

#[test]
fn every_alignment_and_zeroing_and_realloc() {
    for shift in 0..=16 {
        let align = 1usize << shift;
        for size in [1usize, 7, align, 3 * align + 1, 100_000] {
            let layout = Layout::from_size_align(size, align).unwrap();
            unsafe {
                let p = Strata.alloc_zeroed(layout);
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0, "{layout:?}");
                assert!(std::slice::from_raw_parts(p, size).iter().all(|&b| b == 0));
                for i in 0..size {
                    *p.add(i) = i as u8;
                }
                let bigger = Strata.realloc(p, layout, size * 2 + 5);
                assert_eq!(bigger as usize % align, 0, "realloc {layout:?}");
                assert!((0..size).all(|i| *bigger.add(i) == i as u8));
                let smaller = Strata.realloc(bigger, Layout::from_size_align(size * 2 + 5, align).unwrap(), 1);
                assert_eq!(*smaller, 0);
                Strata.dealloc(smaller, Layout::from_size_align(1, align).unwrap());
            }
        }
    }
}

#[test]
fn out_of_memory_is_null() {
    unsafe {
        assert!(Strata.alloc(Layout::from_size_align(1 << 60, 16).unwrap()).is_null());
        assert!(Strata.alloc(Layout::from_size_align(1 << 60, 4096).unwrap()).is_null());
        assert!(Strata.alloc_zeroed(Layout::from_size_align(1 << 60, 8).unwrap()).is_null());
    }
}

#[test]
fn threads_allocate_and_free_across() {
    let handles: Vec<_> = (0..4u64)
        .map(|t| std::thread::spawn(move || (0..20_000).map(|i| Box::new(t * 1_000_000 + i)).collect::<Vec<_>>()))
        .collect();
    let all: Vec<Vec<Box<u64>>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for (t, boxes) in all.iter().enumerate() {
        assert!(boxes.iter().enumerate().all(|(i, b)| **b == t as u64 * 1_000_000 + i as u64));
    }
    drop(all); // freed on another thread than the one that allocated
}
