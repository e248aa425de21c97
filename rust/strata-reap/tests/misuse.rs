//! Misuse the borrow checker allows but a reap cannot support: each fails
//! cleanly (an error value, or an abort with a message), and the reap stays
//! usable where the process goes on. (What the borrow checker rejects is in
//! the crate docs' compile_fail examples.)
use std::alloc::Layout;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::{Command, Output};

use allocator_api2::alloc::Allocator;
use allocator_api2::boxed::Box;
use allocator_api2::vec::Vec;
use strata_reap::Reap;

const CHILD: &str = "STRATA_REAP_TEST_CHILD";

/// Runs the test `name` of this binary again in a child process with
/// CHILD=1 (plus `env`), and returns what it did.
fn run_child(name: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", name, "--test-threads=1", "--nocapture"]).env(CHILD, "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn in_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

fn assert_aborted_with(out: &Output, message: &str) {
    use std::os::unix::process::ExitStatusExt;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(6), "expected SIGABRT; stderr: {stderr}");
    assert!(stderr.contains(message), "expected {message:?} in stderr: {stderr}");
}

#[test]
fn absurd_sizes_are_errors_and_the_reap_goes_on() {
    let reap = Reap::new();
    for size in [usize::MAX, usize::MAX - 15, isize::MAX as usize, 1 << 50] {
        for align in [1, 16, 4096] {
            if let Ok(layout) = Layout::from_size_align(size, align) {
                assert!(reap.try_alloc_layout(layout).is_err(), "{layout:?}");
                assert!((&reap).allocate(layout).is_err(), "{layout:?}");
            }
        }
    }
    let mut v: Vec<u64, &Reap> = Vec::new_in(&reap);
    assert!(v.try_reserve(1 << 55).is_err());
    v.push(5);
    assert_eq!(*reap.alloc(9u32) + v[0] as u32, 14);
}

#[test]
fn alloc_without_memory_aborts_with_a_message() {
    if in_child() {
        let reap = Reap::new();
        reap.alloc_layout(Layout::from_size_align(1 << 50, 16).unwrap());
        unreachable!("alloc_layout returned without memory");
    }
    let out = run_child("alloc_without_memory_aborts_with_a_message", &[]);
    assert_aborted_with(&out, "memory allocation of 1125899906842624 bytes failed");
}

#[test]
fn a_panic_inside_scope_frees_the_child() {
    fn resident_kib() -> usize {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
    let reap = Reap::new();
    let kept = reap.alloc(7u32);
    let before = reap.stats();
    let rss = resident_kib();
    for round in 0..300 {
        let result = catch_unwind(AssertUnwindSafe(|| {
            reap.scope(|child| {
                let mib = child.alloc_layout(Layout::from_size_align(1 << 20, 16).unwrap());
                unsafe { mib.as_ptr().write_bytes(round as u8, 1 << 20) }; // touched: resident
                panic!("round {round}");
            })
        }));
        assert!(result.is_err());
    }
    assert_eq!(reap.stats(), before);
    assert_eq!(*kept, 7);
    let grown = resident_kib().saturating_sub(rss);
    // A leak would leave 300 MiB; ASan's own bookkeeping of 300 panics stays well below half.
    assert!(grown < 150 * 1024, "300 MiB of unwound scopes left {grown} KiB resident");
}

#[test]
fn forgotten_collections_come_back_at_clear() {
    let mut reap = Reap::new();
    {
        let b = Box::new_in([1u8; 100], &reap);
        let mut v: Vec<u32, &Reap> = Vec::new_in(&reap);
        v.extend(0..1000);
        std::mem::forget(b);
        std::mem::forget(v);
    }
    assert_eq!(reap.stats().bytes_live, 104 + 4000, "forgotten objects stay until clear");
    reap.clear();
    assert_eq!(reap.stats().bytes_live, 0);
}

#[test]
fn an_emptied_vec_keeps_nothing() {
    // allocator-api2 0.2 shrinks an emptied Vec to size 0 and forgets the
    // pointer; zero-size allocations own no memory, so nothing leaks.
    let reap = Reap::new();
    let mut v: Vec<u64, &Reap> = Vec::new_in(&reap);
    v.extend(0..100);
    v.clear();
    v.shrink_to_fit();
    assert_eq!(reap.stats().bytes_live, 0);
    v.push(3);
    assert_eq!((v[0], reap.stats().bytes_live), (3, v.capacity() * 8));
}

#[test]
fn checked_mode_aborts_on_a_free_through_the_wrong_reap() {
    if in_child() {
        let a = Reap::new();
        let b = Reap::new();
        let object = a.alloc_layout(Layout::new::<u64>());
        // SAFETY: deliberately wrong; checked mode must catch it.
        unsafe { b.free(object, Layout::new::<u64>()) };
        unreachable!("the wrong-reap free was not caught");
    }
    let out = run_child("checked_mode_aborts_on_a_free_through_the_wrong_reap", &[("STRATA_REAP_CHECK", "1")]);
    assert_aborted_with(&out, "wrong reap");
}

#[test]
fn checked_mode_aborts_on_a_double_free() {
    if in_child() {
        let a = Reap::new();
        let object = a.alloc_layout(Layout::new::<u64>());
        // SAFETY: deliberately wrong; checked mode must catch it.
        unsafe {
            a.free(object, Layout::new::<u64>());
            a.free(object, Layout::new::<u64>());
        }
        unreachable!("the double free was not caught");
    }
    let out = run_child("checked_mode_aborts_on_a_double_free", &[("STRATA_REAP_CHECK", "1")]);
    assert_aborted_with(&out, "double free");
}

#[test]
fn checked_mode_aborts_on_a_free_with_the_wrong_size() {
    if in_child() {
        let a = Reap::new();
        let object = a.alloc_layout(Layout::new::<u64>());
        // SAFETY: deliberately wrong; checked mode must catch it.
        unsafe { a.free(object, Layout::new::<[u64; 2]>()) };
        unreachable!("the wrong size was not caught");
    }
    let out = run_child("checked_mode_aborts_on_a_free_with_the_wrong_size", &[("STRATA_REAP_CHECK", "1")]);
    assert_aborted_with(&out, "wrong size: freed with 16 bytes, allocated with 8");
}

/// Under `make test-rust-asan` (the reap's C++ built with ASan, so every reap
/// is checked and tells ASan about each object): reading past the end of an
/// object, or an object freed back to the reap, is reported by ASan.
#[cfg(strata_reap_asan)]
#[test]
fn asan_reports_reads_out_of_an_object() {
    if in_child() {
        let reap = Reap::new();
        let bytes = reap.alloc_slice_copy(&[1u8; 24]);
        let past = unsafe { bytes.as_ptr().add(24 + 8).read_volatile() };
        unreachable!("read {past} past the object unreported");
    }
    let out = run_child("asan_reports_reads_out_of_an_object", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("ERROR: AddressSanitizer"), "{stderr}");
}
