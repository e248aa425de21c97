#!/bin/sh
# Packages strata-reap and strata-alloc as crates.io would get them, then
# builds the .crate files in a fresh folder outside the repository and runs
# their doc examples there (make test-rust calls this).
#
#   rust/package.sh            vendor, package, build and test outside the repo
#   rust/package.sh --publish  also `cargo publish --dry-run` for both crates
#
# The C/C++ sources have one home, include/ and src/. The packaged crate needs
# them inside itself, so each crate's vendor/ is made here from those files,
# just before `cargo package`, and never committed (rust/.gitignore): a copy
# that is made afresh from the source every time cannot differ from it.
# In the repository the build scripts read include/ and src/ directly.
set -eu
rust=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$rust")
cd "$rust"

# crate -> the folders of src/ it compiles (include/strata goes to both).
vendor() {
  crate=$1; shift
  rm -rf "$crate/vendor"
  mkdir -p "$crate/vendor/include" "$crate/vendor/src"
  cp -R "$repo/include/strata" "$crate/vendor/include/"
  for dir in "$@"; do
    mkdir -p "$crate/vendor/src/$dir"
    find "$repo/src/$dir" -maxdepth 1 \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) \
      -exec cp {} "$crate/vendor/src/$dir/" \;
  done
}
vendor strata-reap reap
vendor strata-alloc malloc

# The packaged builds below must not find the repository's sources.
out=$(mktemp -d /tmp/strata-crates.XXXXXX)
trap 'rm -rf "$out" strata-reap/vendor strata-alloc/vendor' EXIT
cargo package -p strata-reap -p strata-alloc --no-verify --allow-dirty --target-dir "$out/target" >/dev/null
for crate in "$out"/target/package/*.crate; do
  tar -xzf "$crate" -C "$out"
done
ls "$out"/*/vendor/include/strata/reap.h >/dev/null

if [ "${1:-}" = --publish ]; then
  cargo publish -p strata-reap --dry-run --allow-dirty --target-dir "$out/target"
  cargo publish -p strata-alloc --dry-run --allow-dirty --target-dir "$out/target"
fi

# Outside the repository: the crates' own doc examples (the README's too),
# against nothing but what the .crate files hold.
export CARGO_TARGET_DIR="$out/build"
for dir in "$out"/strata-reap-* "$out"/strata-alloc-*; do
  [ -d "$dir" ] || continue
  (cd "$dir" && cargo test --doc --quiet)
done
echo "package.sh: strata-reap and strata-alloc build and pass their doc tests from their .crate files in $out"
