//! Compiles strata's reap library (src/reap/reap.cpp and the header-only
//! region layers under include/strata) with the `cc` crate, so no CMake step
//! is needed.
//!
//! The sources have one home, the repository's `include/` and `src/`. Built
//! inside the repository, the crate compiles them there; the packaged crate
//! (`cargo package`, crates.io) carries a copy in `vendor/`, made by
//! `rust/package.sh` from the same files just before packaging and never
//! committed, so it cannot drift from them.
use std::path::{Path, PathBuf};

/// The folder holding `include/` and `src/`: the repository when this crate
/// is built from it, else the packaged copy in `vendor/`.
fn source_root(manifest: &Path) -> PathBuf {
    let repo = manifest.join("../..");
    if repo.join("include/strata/reap.h").is_file() && repo.join("src/reap/reap.cpp").is_file() {
        return repo;
    }
    let vendor = manifest.join("vendor");
    assert!(
        vendor.join("include/strata/reap.h").is_file(),
        "strata-reap: neither the strata repository nor vendor/ (rust/package.sh) holds the C sources"
    );
    vendor
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = source_root(&manifest);
    let include = repo.join("include");
    let src = repo.join("src");
    let sources = [src.join("reap/reap.cpp")];
    for path in sources.iter().chain([&include, &src.join("reap")]) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    println!("cargo:rerun-if-env-changed=STRATA_REAP_CFLAGS");

    let reap_h = std::fs::read_to_string(include.join("strata/reap.h")).expect("include/strata/reap.h");
    check_head_version(&reap_h);
    write_contract(&reap_h);

    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++20")
        .files(&sources)
        .include(&include)
        .include(&src)
        // Release code whatever the cargo profile: the slow path is C++ and
        // the tests would otherwise measure an -O0 reap.
        .opt_level(2)
        .define("NDEBUG", None)
        .flag_if_supported("-fno-plt")
        .warnings(false);
    // Extra flags, e.g. -fsanitize=address for `make test-rust-asan`.
    println!("cargo::rustc-check-cfg=cfg(strata_reap_asan)");
    if let Ok(extra) = std::env::var("STRATA_REAP_CFLAGS") {
        for flag in extra.split_whitespace() {
            build.flag(flag);
        }
        // The tests that expect ASan reports run only then.
        if extra.contains("-fsanitize=address") {
            println!("cargo:rustc-cfg=strata_reap_asan");
        }
    }
    build.compile("strata_reap_c");
}

/// src/ffi.rs mirrors `strata_reap_head` and the inline
/// `strata_reap_malloc_sized` of this layout version; another one needs the
/// Rust mirror rewritten.
const MIRRORED_HEAD_VERSION: &str = "3";

/// The value of `#define NAME value` in reap.h.
fn define(reap_h: &str, name: &str) -> String {
    let prefix = format!("#define {name} ");
    reap_h
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| panic!("reap.h defines {name}"))
}

fn check_head_version(reap_h: &str) {
    let version = define(reap_h, "STRATA_REAP_HEAD_VERSION");
    assert_eq!(
        version, MIRRORED_HEAD_VERSION,
        "reap.h's head layout is version {version}; strata-reap's inline fast path mirrors version {MIRRORED_HEAD_VERSION}"
    );
}

/// reap.h's sized contract (granule, largest stream slot, prefetch distance)
/// as Rust constants in `$OUT_DIR/contract.rs`: the inline path uses them,
/// so they have one source.
fn write_contract(reap_h: &str) {
    let number = |name: &str| -> usize {
        let v = define(reap_h, name);
        v.parse().unwrap_or_else(|_| panic!("reap.h's {name} is not a number: {v}"))
    };
    let granule = number("STRATA_REAP_SIZED_GRANULE");
    let max_slot = number("STRATA_REAP_SIZED_MAX_SLOT");
    let prefetch_ahead = number("STRATA_REAP_PREFETCH_AHEAD");
    assert!(granule.is_power_of_two() && granule >= 8, "reap.h's sized granule {granule}: a power of two, at least 8");
    assert_eq!(max_slot % granule, 0, "reap.h's largest sized slot {max_slot} is not a multiple of {granule}");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("contract.rs");
    std::fs::write(
        out,
        format!(
            "/// `STRATA_REAP_SIZED_GRANULE`: slots are multiples of it; every result is aligned to it.\n\
             pub(crate) const SIZED_GRANULE: usize = {granule};\n\
             /// `STRATA_REAP_SIZED_MAX_SLOT`: the largest slot the stream (and the inline path) serves.\n\
             pub(crate) const SIZED_MAX_SLOT: usize = {max_slot};\n\
             /// `STRATA_REAP_PREFETCH_AHEAD`: how far ahead of the bump the inline path prefetches.\n\
             pub(crate) const PREFETCH_AHEAD: usize = {prefetch_ahead};\n"
        ),
    )
    .expect("write contract.rs");
}
