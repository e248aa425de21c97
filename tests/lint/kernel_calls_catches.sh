#!/usr/bin/env bash
# tools/lint/kernel_calls.sh must fail on a kernel call planted outside the
# platform layer, name its file and line, and let comments, strings, the
# platform layer itself and src/drag pass.
set -euo pipefail
lint=$1
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/src/malloc" "$tree/src/drag" "$tree/include/strata/platform"
cat > "$tree/src/malloc/quiet.cpp" <<'CODE'
// madvise(p, n, MADV_DONTNEED) in a comment is no call
/* nor is mmap(...) here */
const char* text = "sysconf(_SC_PAGESIZE)";
void* my_mmap_wrapper(int);
CODE
echo 'void f() { ::madvise(0, 0, 0); }' > "$tree/src/drag/tool.c"
echo 'inline long page() { return ::sysconf(30); }' > "$tree/include/strata/platform/pages.hpp"
"$lint" "$tree" >/dev/null || { echo "FAIL: a clean tree was refused"; exit 1; }
printf '#include <x>\nvoid g(void* p) {\n  ::mprotect(p, 4096, 0);\n}\n' > "$tree/src/malloc/leak.cpp"
if out=$("$lint" "$tree" 2>&1); then
  echo "FAIL: the planted mprotect call passed"; exit 1
fi
grep -q 'src/malloc/leak.cpp:3:' <<<"$out" || { echo "FAIL: file and line not named: $out"; exit 1; }
rm "$tree/src/malloc/leak.cpp"
echo '  syscall(SYS_futex, w, 0, 1, 0, 0, 0);' > "$tree/src/malloc/raw.cpp"
if "$lint" "$tree" >/dev/null 2>&1; then echo "FAIL: a raw SYS_futex passed"; exit 1; fi
echo "ok"
