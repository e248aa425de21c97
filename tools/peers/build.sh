#!/usr/bin/env bash
# Builds the newest mimalloc (3.x) and snmalloc (0.7) as LD_PRELOAD libraries
# for `strata-lab bench malloc` (the allocator registry's mimalloc3 and snmalloc),
# and their hardened builds for the hardening section (strata-lab misuse):
# mimalloc-secure (the same tree with MI_SECURE=ON) and snmalloc-checks
# (snmalloc's own libsnmallocshim-checks.so, SNMALLOC_CHECK_CLIENT). Neither is
# a Debian package and this machine reaches crates.io but not GitHub, so the sources come through cargo: the crates
# libmimalloc-sys and snmalloc-sys ship the C/C++ trees, which we build with
# their own CMake (not through the crates' build.rs).
#
# usage: tools/peers/build.sh [OUT_DIR]      (default: build/peers)
# prints the four .so paths on stdout; progress goes to stderr.
set -euo pipefail

MIMALLOC_CRATE=libmimalloc-sys MIMALLOC_CRATE_VERSION=0.1.49   # mimalloc 3.3.2 in c_src/mimalloc/v3
SNMALLOC_CRATE=snmalloc-sys    SNMALLOC_CRATE_VERSION=0.7.6    # snmalloc in upstream/

root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "${1:-$root/build/peers}")
jobs=${JOBS:-2}

fail() { echo "tools/peers/build.sh: error: $*" >&2; exit 1; }
step() { echo "== $*" >&2; }

for tool in cargo cmake ninja python3 c++ cc; do
  command -v "$tool" >/dev/null || fail "'$tool' not found on PATH (cargo: https://rustup.rs or apt-get install cargo; the others: make setup)"
done

# A throwaway package whose only purpose is to make cargo fetch exactly these
# two crate versions ('=' pins them); nothing here is ever compiled by cargo.
manifest_dir=$out/fetch
mkdir -p "$manifest_dir/src"
cat >"$manifest_dir/Cargo.toml" <<TOML
[package]
name = "strata-peer-sources"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$MIMALLOC_CRATE = "=$MIMALLOC_CRATE_VERSION"
$SNMALLOC_CRATE = "=$SNMALLOC_CRATE_VERSION"

[workspace]
TOML
: >"$manifest_dir/src/lib.rs"

step "cargo fetch ($MIMALLOC_CRATE $MIMALLOC_CRATE_VERSION, $SNMALLOC_CRATE $SNMALLOC_CRATE_VERSION)"
(cd "$manifest_dir" && cargo fetch --manifest-path Cargo.toml >&2) \
  || fail "cargo fetch failed (is crates.io reachable? see the messages above)"

# Where cargo unpacked each crate: ask cargo, do not guess the registry path.
crate_dir() {
  (cd "$manifest_dir" && cargo metadata --format-version 1 --offline) | python3 -c '
import json, os, sys
name, version = sys.argv[1], sys.argv[2]
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == name and p["version"] == version:
        print(os.path.dirname(p["manifest_path"]))
        break
' "$1" "$2"
}
mimalloc_src=$(crate_dir "$MIMALLOC_CRATE" "$MIMALLOC_CRATE_VERSION")/c_src/mimalloc/v3
snmalloc_src=$(crate_dir "$SNMALLOC_CRATE" "$SNMALLOC_CRATE_VERSION")/upstream
[ -f "$mimalloc_src/CMakeLists.txt" ] || fail "no mimalloc v3 CMake tree at '$mimalloc_src'"
[ -f "$snmalloc_src/CMakeLists.txt" ] || fail "no snmalloc CMake tree at '$snmalloc_src'"

mimalloc_version=$(sed -n 's/^#define MI_MALLOC_VERSION \([0-9]*\).*/\1/p' "$mimalloc_src/include/mimalloc.h")
[ -n "$mimalloc_version" ] || fail "no MI_MALLOC_VERSION in $mimalloc_src/include/mimalloc.h"
step "mimalloc (MI_MALLOC_VERSION $mimalloc_version) from $mimalloc_src"
# The crate leaves out mimalloc's cmake/ directory, which the top CMakeLists
# includes (the version numbers, and a pkg-config path helper). Build from a
# copy with stand-ins for those two files; the sources are untouched.
mimalloc_tree=$out/src/mimalloc3
# (cp -a keeps the timestamps, so a second run rebuilds nothing)
rm -rf "$mimalloc_tree" && mkdir -p "$out/src" && cp -a "$mimalloc_src" "$mimalloc_tree"
if [ ! -f "$mimalloc_src/cmake/mimalloc-config-version.cmake" ]; then
  mkdir -p "$mimalloc_tree/cmake"
  cat >"$mimalloc_tree/cmake/mimalloc-config-version.cmake" <<CMAKE
# stand-in written by tools/peers/build.sh from MI_MALLOC_VERSION $mimalloc_version
set(mi_version_major $((mimalloc_version / 10000)))
set(mi_version_minor $((mimalloc_version / 100 % 100)))
set(mi_version_patch $((mimalloc_version % 100)))
set(mi_version "\${mi_version_major}.\${mi_version_minor}")
CMAKE
  cat >"$mimalloc_tree/cmake/JoinPaths.cmake" <<'CMAKE'
# stand-in written by tools/peers/build.sh: only the pkg-config file uses it
function(join_paths joined_path first_path_segment)
  set(result "${first_path_segment}")
  foreach(segment IN LISTS ARGN)
    if(IS_ABSOLUTE "${segment}")
      set(result "${segment}")
    else()
      set(result "${result}/${segment}")
    endif()
  endforeach()
  set(${joined_path} "${result}" PARENT_SCOPE)
endfunction()
CMAKE
fi
mimalloc_src=$mimalloc_tree
# Shared library with malloc/free overridden; tests, static and object
# libraries off (the crate does not ship mimalloc's test/ directory).
cmake -S "$mimalloc_src" -B "$out/mimalloc3" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMI_OVERRIDE=ON -DMI_BUILD_SHARED=ON -DMI_BUILD_STATIC=OFF -DMI_BUILD_OBJECT=OFF -DMI_BUILD_TESTS=OFF \
  >&2 || fail "cmake configure of mimalloc failed"
cmake --build "$out/mimalloc3" -j "$jobs" --target mimalloc >&2 || fail "building mimalloc failed"
# The secure build: guard pages, randomised allocation, encoded free lists,
# double-free detection (what libmimalloc-sys's `secure` feature turns on).
cmake -S "$mimalloc_src" -B "$out/mimalloc-secure" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMI_SECURE=ON \
  -DMI_OVERRIDE=ON -DMI_BUILD_SHARED=ON -DMI_BUILD_STATIC=OFF -DMI_BUILD_OBJECT=OFF -DMI_BUILD_TESTS=OFF \
  >&2 || fail "cmake configure of mimalloc (MI_SECURE=ON) failed"
cmake --build "$out/mimalloc-secure" -j "$jobs" --target mimalloc >&2 || fail "building mimalloc-secure failed"

step "snmalloc from $snmalloc_src"
# libsnmallocshim.so is snmalloc's LD_PRELOAD library (malloc + operator new),
# libsnmallocshim-checks.so the same with SNMALLOC_CHECK_CLIENT (its hardened
# build); only those targets are built (the crate does not ship the tests).
cmake -S "$snmalloc_src" -B "$out/snmalloc" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSNMALLOC_BUILD_TESTING=OFF \
  >&2 || fail "cmake configure of snmalloc failed"
cmake --build "$out/snmalloc" -j "$jobs" --target snmallocshim snmallocshim-checks >&2 \
  || fail "building snmalloc failed"

# A version note the benchmark report can quote.
printf 'mimalloc3 %s (crate %s %s)\nsnmalloc crate %s %s\n' "$mimalloc_version" \
  "$MIMALLOC_CRATE" "$MIMALLOC_CRATE_VERSION" "$SNMALLOC_CRATE" "$SNMALLOC_CRATE_VERSION" >"$out/VERSIONS"
printf 'mimalloc-secure %s MI_SECURE=ON (crate %s %s)\nsnmalloc-checks SNMALLOC_CHECK_CLIENT (crate %s %s)\n' \
  "$mimalloc_version" "$MIMALLOC_CRATE" "$MIMALLOC_CRATE_VERSION" "$SNMALLOC_CRATE" "$SNMALLOC_CRATE_VERSION" \
  >>"$out/VERSIONS"

# Where each library is: the lab's allocator registry (lab/strata_lab/allocators.py)
# says, and checks that a program's malloc really binds to it, and to nothing
# else, under LD_PRELOAD (a preload that does not take effect is only a warning
# from ld.so). It prints the four paths.
PYTHONPATH="$root/lab" STRATA_LAB_PEERS_DIR="$out" python3 -m strata_lab.allocators check \
  mimalloc3 snmalloc mimalloc-secure snmalloc-checks \
  || fail "a library is missing after the build, or malloc does not bind to it (see above)"
