"""Record then replay reproduces the recorded peak live bytes and objects
exactly, on every allocator, and the lab's profiler agrees independently."""
import json
import struct

import pytest

from conftest import ALLOCATORS, BUILD, PATTERNS, lab_ok, profile_of, run_with_shims
from strata_lab import tracing
from strata_lab.errors import LabError
from strata_lab.tracing import read_summary


@pytest.fixture(scope="module")
def mixed_trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "mixed.trace"
    lab_ok("trace", "record", "-o", path, "--", PATTERNS, "mixed")
    return path


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_replay_reaches_the_recorded_peaks_exactly(tmp_path, mixed_trace, allocator):
    recorded = read_summary(mixed_trace)
    out = tmp_path / "replay.json"
    result = lab_ok("trace", "replay", mixed_trace, "--alloc", allocator, "--json", out, "--csv", tmp_path / "r.csv")
    summary = json.loads(out.read_text())
    assert (summary["peak_live_bytes"], summary["peak_live_objects"]) == \
        (recorded["peak_live_bytes"], recorded["peak_live_objects"])
    assert summary["records"] == recorded["records"]
    assert summary["replay_seconds"] > 0 and summary["peak_rss_bytes"] > recorded["peak_live_bytes"]
    assert summary["fragmentation"] >= 0.9  # memory in use cannot be far below live data
    assert "peak live" in result.stdout


def test_recorded_peaks_equal_the_profilers(tmp_path, mixed_trace):
    """Single-threaded, so the profiler (a separate run) sees the same sequence."""
    profile, _ = profile_of(tmp_path, "mixed")
    recorded = read_summary(mixed_trace)
    assert (recorded["peak_live_bytes"], recorded["peak_live_objects"]) == \
        (profile["peak_live_bytes"], profile["peak_live_objects"])
    assert recorded["objects"] == profile["total_objects"]
    assert recorded["live_bytes_at_end"] == profile["live_bytes_at_exit"]


def test_profiler_stacked_on_the_replayer_sees_the_recorded_peaks(tmp_path, mixed_trace):
    recorded = read_summary(mixed_trace)
    result = run_with_shims(["profile"], [BUILD / "src/lab/strata-replay", mixed_trace],
                            {"STRATA_LAB_PROFILE_OUT": tmp_path / "p.json", "STRATA_LAB_REPLAY_REPORT": tmp_path / "r.json"})
    assert result.returncode == 0, result.stderr
    profile = json.loads((tmp_path / "p.json").read_text())
    assert (profile["peak_live_bytes"], profile["peak_live_objects"]) == \
        (recorded["peak_live_bytes"], recorded["peak_live_objects"])
    assert profile["total_objects"] == recorded["objects"]


@pytest.mark.parametrize("allocator", ["glibc", "jemalloc", "tcmalloc"])
def test_replay_on_the_recorded_threads_reaches_the_same_peaks(tmp_path, allocator):
    trace = tmp_path / "threads.trace"
    lab_ok("trace", "record", "-o", trace, "--", PATTERNS, "threads")
    recorded = read_summary(trace)
    out = tmp_path / "replay.json"
    result = lab_ok("trace", "replay", trace, "--alloc", allocator, "--threads", "--json", out)
    summary = json.loads(out.read_text())
    assert summary["threads"] is True and "on 5 threads" in result.stdout
    assert (summary["peak_live_bytes"], summary["peak_live_objects"]) == \
        (recorded["peak_live_bytes"], recorded["peak_live_objects"])
    assert summary["records"] == recorded["records"]


@pytest.mark.parametrize("mode", ["threads", "realloc", "aligned", "large", "basic"])
@pytest.mark.parametrize("allocator", ["glibc", "jemalloc", "strata"])
def test_every_pattern_replays_exactly(tmp_path, mode, allocator):
    trace = tmp_path / f"{mode}.trace"
    lab_ok("trace", "record", "-o", trace, "--alloc", allocator, "--", PATTERNS, mode)
    recorded = read_summary(trace)
    out = tmp_path / "replay.json"
    lab_ok("trace", "replay", trace, "--alloc", allocator, "--json", out)
    summary = json.loads(out.read_text())
    assert (summary["peak_live_bytes"], summary["peak_live_objects"]) == \
        (recorded["peak_live_bytes"], recorded["peak_live_objects"])
    if mode == "threads":
        assert recorded["threads"] == 5  # main + 4


def test_fork_child_gets_its_own_trace(tmp_path):
    trace = tmp_path / "fork.trace"
    result = lab_ok("trace", "record", "-o", trace, "--", PATTERNS, "fork")
    (child,) = tmp_path.glob("fork.*.trace")
    assert str(child) in result.stdout
    parent, child_summary = read_summary(trace), read_summary(child)
    assert (parent["objects"], parent["peak_live_objects"]) == (10, 10)
    # The child's trace is self-contained: its own 5 objects; the inherited ones are unknown to it.
    assert (child_summary["objects"], child_summary["peak_live_objects"]) == (5, 5)
    lab_ok("trace", "replay", child)


def test_a_shell_and_its_children_are_traced(tmp_path):
    """dash leaves by _exit: the recorder closes its trace there too."""
    trace = tmp_path / "shell.trace"
    lab_ok("trace", "record", "-o", trace, "--", "sh", "-c", f"{PATTERNS} basic; true")
    summaries = [read_summary(p) for p in [trace] + sorted(tmp_path.glob("shell.*.trace"))]
    assert any(s["objects"] == 150 and s["peak_live_bytes"] == 6400 for s in summaries)


def test_a_missed_free_is_recorded_so_the_trace_replays(tmp_path):
    trace = tmp_path / "bypass.trace"
    lab_ok("trace", "record", "-o", trace, "--", PATTERNS, "bypass")
    recorded = read_summary(trace)
    assert (recorded["objects"], recorded["peak_live_objects"], recorded["live_bytes_at_end"]) == (2, 1, 0)
    lab_ok("trace", "replay", trace)


# The trace format's one definition is src/lab/trace_format.hpp: the lab reads
# its constants from there (strata_lab.tracing.trace_format).

def _synthetic_trace(path, fmt, version):
    fields = fmt["trailer_fields"]
    header = fmt["header"] + struct.pack("<II", version, 0)
    trailer = fmt["trailer"] + struct.pack(f"<{len(fields)}Q", *range(1, len(fields) + 1))
    path.write_bytes(header + bytes([17, 0, 1, 1]) + trailer)
    return path


def test_format_is_read_from_the_cpp_header():
    fmt = tracing.trace_format()
    assert fmt["header"] == b"STRTRACE" and fmt["trailer"] == b"STRTEND1"
    assert fmt["trailer_fields"][0] == "records" and "live_bytes_at_end" in fmt["trailer_fields"]
    assert fmt["trailer_bytes"] == 8 + 8 * len(fmt["trailer_fields"])  # the header's static_assert, seen from here
    assert fmt["header_bytes"] == 16


def test_a_changed_definition_is_followed(tmp_path, monkeypatch):
    original = tracing.FORMAT_HEADER.read_text()
    changed = tmp_path / "trace_format.hpp"
    changed.write_text(original.replace("kVersion = 1;", "kVersion = 2;"))
    monkeypatch.setattr(tracing, "FORMAT_HEADER", changed)
    tracing.trace_format.cache_clear()
    try:
        fmt = tracing.trace_format()
        assert fmt["version"] == 2
        assert read_summary(_synthetic_trace(tmp_path / "v2.trace", fmt, 2))["records"] == 1
        with pytest.raises(LabError, match="unsupported trace version 1 \\(this lab reads version 2\\)"):
            read_summary(_synthetic_trace(tmp_path / "v1.trace", fmt, 1))
    finally:
        tracing.trace_format.cache_clear()


def test_a_missing_definition_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(tracing, "FORMAT_HEADER", tmp_path / "nowhere.hpp")
    tracing.trace_format.cache_clear()
    try:
        with pytest.raises(LabError, match="nowhere.hpp: cannot read the trace format"):
            tracing.trace_format()
    finally:
        tracing.trace_format.cache_clear()
