"""The fragmentation meter: the `frag` pattern allocates 8192 x 4000 bytes,
frees every other object, then allocates 4096 x 8000 bytes that cannot reuse
the 4000-byte holes, and holds that state for 400 ms.

Peak live data = 4096 x 4000 + 4096 x 8000 = 49,152,000 bytes (exact).
Memory in use at the peak = every 4000-byte slot (the holes stay resident)
plus every 8000-byte object, each rounded to the allocator's block size:
glibc adds a 16-byte chunk header (4016, 8016); jemalloc's and mimalloc's size
classes are 4096 and 8192. The expected ratio follows; the stated tolerance
(5%) covers the allocator's metadata and the process's other anonymous
memory (libc data, the sampled program's own arrays: ~2 MB of 64)."""
import csv
import json

import pytest

from conftest import PATTERNS, lab_ok
from strata_lab.frag import heap_resident_bytes

PEAK_LIVE = 4096 * 4000 + 4096 * 8000
BLOCKS = {"glibc": (4016, 8016), "jemalloc": (4096, 8192), "mimalloc": (4096, 8192)}
TOLERANCE = 0.05


@pytest.mark.parametrize("allocator", sorted(BLOCKS))
def test_frees_every_other_object_gives_the_expected_ratio(tmp_path, allocator):
    small, big = BLOCKS[allocator]
    expected = (8192 * small + 4096 * big) / PEAK_LIVE
    out, series = tmp_path / "frag.json", tmp_path / "frag.csv"
    lab_ok("frag", "--alloc", allocator, "--json", out, "--csv", series, "--interval", 5, "--", PATTERNS, "frag")
    summary = json.loads(out.read_text())
    # A peer allocator's C++ runtime keeps one 72,704-byte pool live from start-up: allow for it exactly.
    assert summary["peak_live_bytes"] - PEAK_LIVE in (0, 72704)
    assert summary["fragmentation"] == pytest.approx(expected, rel=TOLERANCE)
    rows = list(csv.DictReader(series.open()))
    assert len(rows) == summary["samples"] >= 20
    # The 400 ms hold is sampled: the series reaches the exact peak live data and the peak memory.
    assert max(int(r["live_bytes"]) for r in rows) == summary["peak_live_bytes"]
    assert max(int(r["heap_resident_bytes"]) for r in rows) == summary["peak_heap_resident_bytes"]


def test_heap_mappings_are_private_anonymous_memory():
    smaps = """\
55d0c4a4d000-55d0c4a6f000 rw-p 00000000 00:00 0                          [heap]
Size:                136 kB
Rss:                 100 kB
Swap:                  4 kB
7f00000000-7f00100000 rw-p 00000000 00:00 0 
Rss:                1000 kB
7f00100000-7f00200000 rw-p 00000000 00:00 0                          [anon:glibc: malloc arena]
Rss:                  10 kB
7f00200000-7f00300000 r--p 00000000 08:01 1234                       /usr/lib/libc.so.6
Rss:                 500 kB
7f00300000-7f00400000 rw-p 00000000 00:01 1046                       /memfd:strata-lab (deleted)
Rss:                 300 kB
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                      [stack]
Rss:                  20 kB
"""
    assert heap_resident_bytes(smaps) == (100 + 4 + 1000 + 10) * 1024


@pytest.mark.parametrize("allocator", sorted(BLOCKS))
def test_a_peak_shorter_than_the_interval_is_measured_by_the_profiler(tmp_path, allocator):
    """frag-brief holds its peak for no time at all and exits within
    milliseconds: with a 10 s timer the meter never samples, and only the
    profiler's samples at live peaks see the peak."""
    small, big = BLOCKS[allocator]
    out = tmp_path / "frag.json"
    lab_ok("frag", "--alloc", allocator, "--json", out, "--interval", 10000, "--", PATTERNS, "frag-brief")
    summary = json.loads(out.read_text())
    assert summary["samples_at_live_peaks"] >= 1
    assert summary["peak_live_bytes"] - PEAK_LIVE in (0, 72704)
    assert summary["fragmentation"] == pytest.approx((8192 * small + 4096 * big) / PEAK_LIVE, rel=TOLERANCE)


def test_no_sample_is_reported_as_such_never_as_zero(tmp_path):
    """A program whose live data never reaches the first sampling level, with a
    timer too slow to fire: no measurement of memory in use at all."""
    out = tmp_path / "frag.json"
    result = lab_ok("frag", "--json", out, "--interval", 10000, "--", PATTERNS, "basic")
    summary = json.loads(out.read_text())
    if summary["samples"] == 0:  # the timer's first sample can land before exec; then it counts
        assert summary["peak_heap_resident_bytes"] is None and summary["fragmentation"] is None
        assert "no sample of memory in use" in result.stdout
    else:
        assert summary["fragmentation"] > 0


def test_child_processes_are_measured(tmp_path):
    """frag-child: the parent forks a child that makes the frag pattern's peak;
    the meter follows the child (its own live counters and smaps)."""
    small, big = BLOCKS["glibc"]
    out, series = tmp_path / "frag.json", tmp_path / "frag.csv"
    lab_ok("frag", "--json", out, "--csv", series, "--interval", 5, "--", PATTERNS, "frag-child")
    summary = json.loads(out.read_text())
    assert summary["processes"] == 2
    assert summary["peak_live_bytes"] == PEAK_LIVE
    # The parent's own anonymous memory (a few hundred KiB) adds to the child's.
    assert summary["fragmentation"] == pytest.approx((8192 * small + 4096 * big) / PEAK_LIVE, rel=TOLERANCE)
    rows = list(csv.DictReader(series.open()))
    assert max(int(r["processes"]) for r in rows) == 2
