"""The profiler's counts are exact on programs with known allocation patterns."""
import json

import pytest

from conftest import ALLOCATORS, PATTERNS, lab_ok, profile_of

FIELDS = ["total_objects", "total_bytes", "realloc_calls", "free_calls", "large_objects", "large_bytes",
          "live_objects_at_exit", "live_bytes_at_exit", "unknown_frees", "untracked_objects"]


def program_part(tmp_path, mode, allocator):
    """The mode's profile minus the profile of a program that allocates
    nothing on the same allocator: some allocators load the C++ runtime,
    whose start-up allocations (e.g. libstdc++'s exception pool) are real but
    not the test program's. Under glibc the baseline is all zeros."""
    profile, stdout = profile_of(tmp_path, mode, allocator)
    base, _ = profile_of(tmp_path, "nothing", allocator, name="baseline")
    if allocator == "glibc":
        assert all(base[f] == 0 for f in FIELDS + ["peak_live_bytes"]) and base["size_histogram"] == {}
    part = {f: profile[f] - base[f] for f in FIELDS}
    # The baseline's objects stay live for the whole run, so they sit under every peak.
    part["peak_live_objects"] = profile["peak_live_objects"] - base["live_objects_at_exit"]
    part["peak_live_bytes"] = profile["peak_live_bytes"] - base["live_bytes_at_exit"]
    histogram = dict(profile["size_histogram"])
    for size, count in base["size_histogram"].items():
        histogram[size] -= count
    part["size_histogram"] = {k: v for k, v in histogram.items() if v}
    part["average_size"] = profile["average_size"]
    return part, stdout


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_basic_counts_are_exact(tmp_path, allocator):
    p, _ = program_part(tmp_path, "basic", allocator)
    assert p["size_histogram"] == {"24": 100, "80": 50}
    assert (p["total_objects"], p["total_bytes"]) == (150, 100 * 24 + 50 * 80)
    assert (p["peak_live_objects"], p["peak_live_bytes"]) == (150, 6400)
    assert (p["free_calls"], p["realloc_calls"], p["live_objects_at_exit"], p["unknown_frees"]) == (150, 0, 0, 0)


def test_average_size_and_table3_columns(tmp_path):
    profile, _ = profile_of(tmp_path, "basic")
    assert profile["average_size"] == pytest.approx(6400 / 150, abs=1e-3)
    assert profile["total_to_peak_bytes"] == pytest.approx(1.0)
    assert profile["cutoff"] == 4096 and profile["format"] == "strata-profile"
    assert profile["exit_status"] == {"exit_code": 0}
    assert profile["command"][-1] == "basic"


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_realloc_paths_are_exact(tmp_path, allocator):
    p, stdout = program_part(tmp_path, "realloc", allocator)
    # realloc(NULL,100); grow to 200 (+100); shrink to 50; malloc(64); reallocarray to 320 (+256);
    # reallocarray overflow (rejected, not a call that reached the allocator); realloc(p, 0).
    assert p["size_histogram"] == {"64": 1, "100": 1}
    assert (p["total_objects"], p["total_bytes"]) == (2, 100 + 64 + 100 + 256)
    assert (p["peak_live_objects"], p["peak_live_bytes"]) == (2, 50 + 320)
    assert p["realloc_calls"] == 5
    # realloc(p, 0) frees p (glibc) or returns a 0-byte object the program then frees.
    outcome = "freed" if "realloc0=freed" in stdout else "object"
    assert f"realloc0={outcome}" in stdout
    assert p["free_calls"] == {"freed": 1, "object": 2}[outcome]
    assert (p["live_objects_at_exit"], p["live_bytes_at_exit"], p["unknown_frees"]) == (0, 0, 0)


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_aligned_allocations_are_exact(tmp_path, allocator):
    p, _ = program_part(tmp_path, "aligned", allocator)
    # posix_memalign 100, aligned_alloc 256, memalign 1000, valloc 5000, pvalloc 5000 -> 8192
    assert p["size_histogram"] == {"100": 1, "256": 1, "1000": 1}
    assert (p["large_objects"], p["large_bytes"]) == (2, 5000 + 8192)
    assert (p["total_objects"], p["total_bytes"]) == (5, 14548)
    assert (p["peak_live_objects"], p["peak_live_bytes"]) == (5, 14548)
    assert (p["free_calls"], p["live_objects_at_exit"], p["unknown_frees"]) == (5, 0, 0)


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_large_objects_and_their_frees_are_exact(tmp_path, allocator):
    p, _ = program_part(tmp_path, "large", allocator)
    total = sum((i + 1) << 20 for i in range(8))
    assert (p["large_objects"], p["large_bytes"], p["total_bytes"]) == (8, total, total)
    assert (p["peak_live_objects"], p["peak_live_bytes"]) == (8, total)
    assert (p["free_calls"], p["live_objects_at_exit"], p["live_bytes_at_exit"]) == (8, 0, 0)


@pytest.mark.parametrize("allocator", ["glibc", "jemalloc"])
def test_threads_are_counted_exactly(tmp_path, allocator):
    p, _ = program_part(tmp_path, "threads", allocator)
    for t in range(4):  # thread t: 1000 objects of 100 + t bytes, all freed (half by main)
        assert p["size_histogram"].pop(str(100 + t)) == 1000
    # What remains is the thread library's own (e.g. glibc's 288-byte TLS blocks, one per thread).
    others = sum(p["size_histogram"].values())
    assert others <= 8
    assert p["total_objects"] == 4000 + others
    assert p["free_calls"] >= 4000 and p["unknown_frees"] == 0
    assert p["live_objects_at_exit"] <= others
    assert 2000 <= p["peak_live_objects"] <= 4000 + others


def test_fork_child_gets_its_own_profile(tmp_path):
    out = tmp_path / "forked.json"
    result = lab_ok("profile", "-o", out, "--", PATTERNS, "fork")
    children = [p for p in tmp_path.glob("forked.*.json")]
    assert len(children) == 1, result.stdout
    assert str(children[0]) in result.stdout
    parent, child = json.loads(out.read_text()), json.loads(children[0].read_text())
    assert parent["size_histogram"] == {"32": 10}
    assert (parent["free_calls"], parent["live_objects_at_exit"]) == (10, 0)
    # The child inherits the parent's 10 live objects, makes and frees 5 of its own.
    assert child["size_histogram"] == {"48": 5}
    assert child["pid"] != parent["pid"]
    assert (child["total_objects"], child["free_calls"]) == (5, 5)
    assert (child["peak_live_objects"], child["live_objects_at_exit"]) == (15, 10)


def test_cutoff_moves_sizes_to_large(tmp_path):
    out = tmp_path / "cut.json"
    lab_ok("profile", "-o", out, "--cutoff", "50", "--", PATTERNS, "basic")
    profile = json.loads(out.read_text())
    assert profile["cutoff"] == 50
    assert profile["size_histogram"] == {"24": 100}
    assert (profile["large_objects"], profile["large_bytes"]) == (50, 4000)


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_cxx_new_and_delete_are_counted_on_every_allocator(tmp_path, allocator):
    """jemalloc, tcmalloc and mimalloc define operator new themselves; the
    shim's own new/delete keep C++ allocation visible on them too."""
    program = PATTERNS.parent / "lab_cxx_patterns"
    out, base_out = tmp_path / "new.json", tmp_path / "base.json"
    lab_ok("profile", "-o", out, "--alloc", allocator, "--", program, "new")
    lab_ok("profile", "-o", base_out, "--alloc", allocator, "--", program, "nothing")
    profile, base = json.loads(out.read_text()), json.loads(base_out.read_text())
    histogram = {k: v - base["size_histogram"].get(k, 0) for k, v in profile["size_histogram"].items()}
    assert {k: v for k, v in histogram.items() if v} == {"8": 100, "24": 1, "64": 5, "1000": 10}
    assert profile["total_objects"] - base["total_objects"] == 116
    assert profile["free_calls"] - base["free_calls"] == 116
    assert profile["peak_live_objects"] - base["live_objects_at_exit"] == 116  # the nothrow one joins the 115
    assert profile["live_objects_at_exit"] == base["live_objects_at_exit"]


def test_exec_and_child_processes_each_get_a_profile(tmp_path):
    """A shell forks and execs two programs: each writes its own profile under
    its own pid (the shell's is the -o file)."""
    out = tmp_path / "shell.json"
    result = lab_ok("profile", "-o", out, "--", "sh", "-c", f"{PATTERNS} basic; {PATTERNS} aligned; true")
    profiles = [json.loads(p.read_text()) for p in [out] + sorted(tmp_path.glob("shell.*.json"))]
    histograms = [p["size_histogram"] for p in profiles]
    assert {"24": 100, "80": 50} in histograms
    assert {"100": 1, "256": 1, "1000": 1} in histograms
    assert len({p["pid"] for p in profiles}) == len(profiles) >= 3
    assert all(p["command"][0] == "sh" for p in profiles)
    # One summary line for the children, naming their files.
    child_lines = [line for line in result.stdout.splitlines() if "child process" in line]
    assert len(child_lines) == 1, result.stdout
    children = sorted(tmp_path.glob("shell.*.json"))
    assert f"{len(children)} child processes profiled: {tmp_path}/shell.<pid>.json for pid " in child_lines[0]
    for child in children:
        assert child.name.split(".")[1] in child_lines[0]


def test_a_free_the_shim_cannot_see_is_accounted_when_the_address_returns(tmp_path):
    """The program frees through glibc's internal __libc_free (not interposed);
    when malloc hands the address out again, the profiler counts the old object
    as freed (missed_frees) instead of counting two live objects."""
    profile, _ = profile_of(tmp_path, "bypass")
    assert profile["missed_frees"] == 1
    assert (profile["total_objects"], profile["peak_live_objects"], profile["live_objects_at_exit"]) == (2, 1, 0)
    assert profile["free_calls"] == 1 and profile["unknown_frees"] == 0
