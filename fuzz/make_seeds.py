#!/usr/bin/env python3
"""Writes the hand-written seeds of fuzz/corpus/ (docs/fuzzing.md, "Input format").

Each seed is a short program for a harness's interpreter that reaches a deep
path at once: nested reaps cleared and destroyed, realloc across size kinds,
refused requests. libFuzzer's own finds sit beside them in the same folders.
Run from the repository root: python3 fuzz/make_seeds.py
"""
from pathlib import Path


def small(n):  # 0..255
    return [0x00, n]


def medium(n):  # up to 16 KiB
    return [0x80, n & 0xFF, (n >> 8) & 0x3F]


def large(n):  # up to 256 KiB, in units of 4 bytes
    return [0xC0, (n // 4) & 0xFF, (n // 4) >> 8]


def huge(extra):  # 1.5 MiB + extra * 16
    return [0xE0, extra & 0xFF, extra >> 8]


def edge(index):  # fuzz_input.hpp's kEdges[index]: 20.. are absurd sizes
    return [0xE8, index]


def step(log2, grow):  # RESIZE's argument: realloc by 2**log2 bytes up or down
    return [log2 << 4 | int(grow)]


def align(log2):
    return [log2]


INVALID_ALIGN = [0xF1]  # kInvalid[241 % 7]: 48, not a power of two

# malloc harness op-codes
MALLOC, CALLOC, REALLOC, FREE, MEMALIGN, ALIGNED, USABLE, RESIZE, BURST, FREE_RANGE = range(10)
# reap harness op-codes
CREATE, DESTROY, CLEAR, R_MALLOC, R_CALLOC, R_ALIGNED, R_REALLOC, R_FREE, R_USABLE, R_STATS = range(10)
ROOT = 6  # a parent selector naming no reap
SIZED = 7  # added to a parent selector: the new reap is a sized one
SIZED_ROOT = ROOT + SIZED

MALLOC_SEEDS = {
    "every-call": [MALLOC, 0, *small(24), CALLOC, 1, 3, *small(40), REALLOC, 0, *medium(3000),
                   MEMALIGN, 2, *align(6), *small(100), ALIGNED, 3, *align(12), *medium(5000),
                   USABLE, 0, REALLOC, 0, *small(8), FREE, 1, RESIZE, 0, *step(4, True), FREE, 2],
    "sizes-across-kinds": [MALLOC, 0, *small(1), REALLOC, 0, *medium(9000), REALLOC, 0, *large(200000),
                           REALLOC, 0, *huge(40000), USABLE, 0, REALLOC, 0, *small(3), MALLOC, 1, *edge(18),
                           ALIGNED, 2, *align(21), *large(70000), RESIZE, 2, *step(12, True), RESIZE, 2, *step(15, False)],
    "refused": [MALLOC, 0, *edge(20), CALLOC, 1, 0xF0, *small(2), REALLOC, 2, *small(50), REALLOC, 2, *edge(23),
                ALIGNED, 3, *INVALID_ALIGN, *small(8), MEMALIGN, 4, *align(2), *small(8),
                MEMALIGN, 5, *align(30), *edge(21)],
    # a page of a 256-byte class filled, emptied every other object first, filled again
    "page-full-and-empty": [BURST, 0, 255, 64, FREE_RANGE, 0, 128, 2, BURST, 0, 200, 64,
                            FREE_RANGE, 1, 128, 2, FREE_RANGE, 0, 255, 1, BURST, 10, 255, 100],
    "reuse-small": [op for i in range(12) for op in (MALLOC, i, *small(16 * i))]
                   + [op for i in range(0, 12, 2) for op in (FREE, i)]
                   + [op for i in range(0, 12, 2) for op in (MALLOC, i, *small(16 * i + 8))]
                   + [op for i in range(1, 12, 2) for op in (RESIZE, i, *step(i % 5, i % 3 == 0))],
}

REAP_SEEDS = {
    "tree-clear-destroy": [CREATE, 0, ROOT, CREATE, 1, 0, CREATE, 2, 1, CREATE, 3, ROOT,
                           R_MALLOC, 0, 0, *small(32), R_MALLOC, 1, 1, *small(64), R_MALLOC, 2, 2, *medium(2000),
                           R_MALLOC, 3, 3, *small(16), CLEAR, 1, R_MALLOC, 4, 2, *small(48), R_STATS, 2,
                           DESTROY, 1, R_MALLOC, 5, 0, *small(8), R_STATS, 0, DESTROY, 0],
    "free-reuse-grow": [CREATE, 0, ROOT] + [op for i in range(10) for op in (R_MALLOC, i, 0, *small(24 + 8 * i))]
                       + [R_FREE, 2, R_FREE, 5, R_FREE, 7, R_MALLOC, 11, 0, *small(40), R_MALLOC, 12, 0, *small(8),
                          R_REALLOC, 9, 0, *medium(1000), R_USABLE, 9, R_REALLOC, 11, 0, *small(100), R_STATS, 0],
    "large-aligned": [CREATE, 0, ROOT, CREATE, 1, 0, R_MALLOC, 0, 0, *large(100000), R_ALIGNED, 1, 1, *align(12),
                      *small(10), R_ALIGNED, 2, 1, *align(16), *large(70000), R_CALLOC, 3, 0, 4, *medium(4000),
                      R_REALLOC, 0, 0, *large(250000), R_STATS, 0, R_STATS, 1, CLEAR, 0, R_MALLOC, 4, 1, *small(1)],
    # a sized reap (R_MALLOC's last byte: 1 sized, 0 strata_reap_malloc) under a tagged one, and a sized root
    "sized-tree": [CREATE, 0, ROOT, CREATE, 1, SIZED + 0, CREATE, 2, SIZED_ROOT, CREATE, 3, SIZED + 1]
                  + [op for i in range(12) for op in (R_MALLOC, i, 1 + i % 3, *small(8 * i), 1)]
                  + [R_FREE, 1, R_FREE, 4, R_FREE, 11, R_MALLOC, 12, 1, *small(8), 1, R_MALLOC, 13, 1, *small(16), 0,
                     R_REALLOC, 10, 0, *medium(3000), R_REALLOC, 12, 0, *small(4), R_STATS, 1, R_STATS, 2,
                     R_ALIGNED, 14, 2, *align(6), *small(40), R_CALLOC, 15, 3, 3, *small(24), R_STATS, 3,
                     CLEAR, 0, R_STATS, 1, R_MALLOC, 16, 1, *large(100000), 1, R_REALLOC, 16, 0, *small(24),
                     R_MALLOC, 17, 3, *edge(20), 1, DESTROY, 0, R_STATS, 2],
    "sized-grow-at-the-bump": [CREATE, 0, SIZED_ROOT, R_MALLOC, 0, 0, *small(16), 1]
                              + [op for i in range(1, 12) for op in (R_REALLOC, 0, 0, *medium(16 << i))]
                              + [R_MALLOC, 1, 0, *small(8), 1, R_REALLOC, 0, 0, *small(40), R_FREE, 1, R_STATS, 0],
    "refused": [CREATE, 0, ROOT, R_MALLOC, 0, 0, *edge(20), R_CALLOC, 1, 0, 0xF0, *small(2),
                R_ALIGNED, 2, 0, *INVALID_ALIGN, *small(8), R_MALLOC, 3, 0, *small(50),
                R_REALLOC, 3, 0, *edge(22), R_STATS, 0],
}


def write(folder, seeds):
    for name, program in seeds.items():
        (Path("fuzz/corpus") / folder / f"seed-{name}").write_bytes(bytes(program))


if __name__ == "__main__":
    write("malloc", MALLOC_SEEDS)
    write("reap", REAP_SEEDS)
