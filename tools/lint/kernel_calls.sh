#!/usr/bin/env bash
# One door to the kernel: fails when a C or C++ file of src/ or include/ makes
# a memory, futex, entropy or page-size system call (mmap, munmap, mremap,
# mprotect, madvise, futex, getrandom, sysconf, or syscall(SYS_...) of one)
# outside the platform layer (include/strata/platform.hpp, platform/). The
# Valgrind tools (src/drag) are Valgrind's clients, not strata: they are
# left out. Comments are ignored.
# Usage: tools/lint/kernel_calls.sh [repository root]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"
calls='mmap|mmap64|munmap|mremap|mprotect|madvise|getrandom|sysconf|futex'
found=$(find src include -type f \( -name '*.c' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) \
          -not -path 'src/drag/*' -not -path 'include/strata/platform/*' -not -path 'include/strata/platform.hpp' |
        sort | xargs awk -v calls="$calls" '
          FNR == 1 { in_block = 0 }
          {
            line = $0
            if (in_block) { if (sub(/.*\*\//, "", line)) in_block = 0; else next }
            gsub(/\/\*.*\*\//, "", line)                      # /* ... */ on one line
            if (sub(/\/\*.*/, "", line)) in_block = 1          # a block comment opens
            sub(/\/\/.*/, "", line)                            # // to the end of the line
            gsub(/"([^"\\]|\\.)*"/, "\"\"", line)              # string literals
            if (line ~ ("(^|[^A-Za-z0-9_])(" calls ")[ \t]*\\(") || line ~ ("SYS_(" calls ")([^A-Za-z0-9_]|$)"))
              printf "%s:%d: %s\n", FILENAME, FNR, $0
          }')
if [[ -n "$found" ]]; then
  echo "kernel calls outside include/strata/platform (add a function there and call it):" >&2
  echo "$found" >&2
  exit 1
fi
echo "kernel calls: all through include/strata/platform"
