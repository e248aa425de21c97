//! Compiles libstrata's allocator (src/malloc, the sources of CMake's
//! `strata_core`: only the prefixed strata_* names, no malloc override) with
//! the `cc` crate, so no CMake step is needed.
//!
//! As for strata-reap: the repository's `include/` and `src/` when built
//! from it, else the copy `rust/package.sh` puts in the packaged crate's
//! `vendor/` (never committed).
use std::path::{Path, PathBuf};

fn source_root(manifest: &Path) -> PathBuf {
    let repo = manifest.join("../..");
    if repo.join("include/strata/strata.h").is_file() && repo.join("src/malloc/api.cpp").is_file() {
        return repo;
    }
    let vendor = manifest.join("vendor");
    assert!(
        vendor.join("src/malloc/api.cpp").is_file(),
        "strata-alloc: neither the strata repository nor vendor/ (rust/package.sh) holds the C sources"
    );
    vendor
}

/// src/malloc/CMakeLists.txt, `strata_malloc_sources`.
const SOURCES: &[&str] = &[
    "os.cpp",
    "per_thread_heap.cpp",
    "arena_lock.cpp",
    "large_heap.cpp",
    "huge_heap.cpp",
    "fast_paths.cpp",
    "c_semantics.cpp",
    "checked.cpp",
    "options.cpp",
    "startup.cpp",
    "stats.cpp",
    "api.cpp",
];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = source_root(&manifest);
    let malloc = repo.join("src/malloc");
    let include = repo.join("include");
    println!("cargo:rerun-if-changed={}", malloc.display());
    println!("cargo:rerun-if-changed={}", include.display());

    cc::Build::new()
        .cpp(true)
        .std("c++20")
        .files(SOURCES.iter().map(|s| malloc.join(s)))
        .include(&malloc)
        .include(&include)
        .opt_level(2)
        .define("NDEBUG", None)
        // As CMake builds strata_malloc_objects: hidden internals, no
        // exceptions or RTTI, the per-thread heap pointer in initial-exec TLS.
        .flag("-fvisibility=hidden")
        .flag("-fvisibility-inlines-hidden")
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .flag("-ftls-model=initial-exec")
        .warnings(false)
        .compile("strata_core");
    println!("cargo:rustc-link-lib=pthread");
}
