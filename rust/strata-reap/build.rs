//! Compiles strata's reap library (src/reap/reap.cpp and the header-only
//! region layers under include/strata) from this repository with the `cc`
//! crate, so no CMake step is needed.
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = manifest.join("../..");
    let include = repo.join("include");
    let src = repo.join("src");
    let sources = [src.join("reap/reap.cpp")];
    for path in sources.iter().chain([&include, &src.join("reap")]) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    println!("cargo:rerun-if-env-changed=STRATA_REAP_CFLAGS");

    check_head_version(&include.join("strata/reap.h"));

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

/// src/ffi.rs mirrors `strata_reap_head` and the inline `strata_reap_malloc`
/// of this layout version; another one needs the Rust mirror rewritten.
const MIRRORED_HEAD_VERSION: &str = "2";

fn check_head_version(reap_h: &std::path::Path) {
    let text = std::fs::read_to_string(reap_h).expect("include/strata/reap.h");
    let version = text
        .lines()
        .find_map(|l| l.strip_prefix("#define STRATA_REAP_HEAD_VERSION "))
        .map(str::trim)
        .expect("reap.h defines STRATA_REAP_HEAD_VERSION");
    assert_eq!(
        version, MIRRORED_HEAD_VERSION,
        "reap.h's head layout is version {version}; strata-reap's inline fast path mirrors version {MIRRORED_HEAD_VERSION}"
    );
}
