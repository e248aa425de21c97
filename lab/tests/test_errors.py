"""Every error path of the CLI: a clear message naming the file and the
problem, the program not started; known names listed; a failing program's
status reported, never a silent partial result."""
import json

import pytest

from conftest import PATTERNS, lab


def never_started(tmp_path):
    """A command that leaves a marker file if it ever runs."""
    marker = tmp_path / "ran"
    return marker, ["--", "touch", marker]


def assert_error(result, *fragments, status=2):
    assert result.returncode == status, result.stderr
    for fragment in fragments:
        assert str(fragment) in result.stderr, result.stderr


def valid_profile(tmp_path):
    path = tmp_path / "p.json"
    counts = {f: 1 for f in ["total_objects", "total_bytes", "peak_live_objects", "peak_live_bytes",
                             "realloc_calls", "free_calls", "live_objects_at_exit", "live_bytes_at_exit",
                             "large_objects", "large_bytes", "unknown_frees", "untracked_objects"]}
    path.write_text(json.dumps(dict(cutoff=4096, size_histogram={"8": 1}, **counts)))
    return path


BAD_PROFILES = [
    ("missing", None, "no such profile file"),
    ("directory", "DIR", "is a directory"),
    ("notjson", "{not json", "malformed profile: not valid JSON"),
    ("array", "[1, 2]", "expected a JSON object"),
    ("nofield", json.dumps({"size_histogram": {}}), "missing field 'cutoff'"),
    ("negative", "NEGATIVE", "field 'peak_live_objects' must be a non-negative integer"),
    ("histogram", "BADHIST", "size_histogram entry 'x'"),
    ("order", "UNORDERED", "size_histogram sizes must ascend"),
]


@pytest.mark.parametrize("name,content,problem", BAD_PROFILES, ids=[b[0] for b in BAD_PROFILES])
def test_bad_profile_is_named_and_program_not_started(tmp_path, name, content, problem):
    path = tmp_path / f"{name}.json"
    good = json.loads(valid_profile(tmp_path).read_text())
    if content == "DIR":
        path.mkdir()
    elif content == "NEGATIVE":
        path.write_text(json.dumps(dict(good, peak_live_objects=-3)))
    elif content == "BADHIST":
        path.write_text(json.dumps(dict(good, size_histogram={"x": 1})))
    elif content == "UNORDERED":
        path.write_text(json.dumps(dict(good, size_histogram={"16": 1, "8": 1})))
    elif content is not None:
        path.write_text(content)
    marker, command = never_started(tmp_path)
    result = lab("run", "--alloc", "glibc", "--preset", "Adv1", "--profile", path, *command)
    assert_error(result, path, problem)
    assert not marker.exists()


def test_unreadable_profile(tmp_path, monkeypatch):
    """Tests run as root, where permission bits do not stop reads: simulate the
    refusal the kernel gives an ordinary user."""
    from pathlib import Path

    from strata_lab import profiling
    from strata_lab.errors import LabError
    path = valid_profile(tmp_path)

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))
    monkeypatch.setattr(Path, "read_text", refuse)
    with pytest.raises(LabError, match="not readable"):
        profiling.load(path)


def test_precondition_preset_needs_a_profile(tmp_path):
    marker, command = never_started(tmp_path)
    assert_error(lab("run", "--alloc", "glibc", "--preset", "Adv3", *command), "give --profile")
    assert not marker.exists()


def test_unknown_allocator_lists_the_known_ones(tmp_path):
    marker, command = never_started(tmp_path)
    for sub in (["profile", "-o", tmp_path / "x.json"], ["frag"], ["run", "--preset", "Adv0"]):
        result = lab(*sub, "--alloc", "hoard", *command)
        assert_error(result, "unknown allocator 'hoard'", "glibc, jemalloc, tcmalloc, mimalloc, strata, kingsley, lea")
    assert not marker.exists()


def test_allocator_path_must_exist(tmp_path):
    marker, command = never_started(tmp_path)
    assert_error(lab("frag", "--alloc", tmp_path / "libnothing.so", *command), "libnothing.so: no such file")
    assert not marker.exists()


def test_missing_libstrata_is_a_clear_error(tmp_path):
    marker, command = never_started(tmp_path)
    result = lab("frag", "--alloc", "strata", *command, env={"STRATA_LAB_LIBSTRATA": tmp_path / "libstrata.so"})
    assert_error(result, "--alloc strata", "libstrata.so is missing")
    assert not marker.exists()


def test_unknown_preset_lists_the_known_ones(tmp_path):
    marker, command = never_started(tmp_path)
    assert_error(lab("run", "--alloc", "glibc", "--preset", "Adv2", *command),
                 "unknown preset 'Adv2'", "Adv0, Adv1, Adv3, Adv10")
    assert not marker.exists()


@pytest.mark.parametrize("flags,problem", [
    (["--preset", "Adv1", "--occupancy", "1.5"], "--occupancy 1.5: must be in [0, 1]"),
    (["--multiplier", "-1", "--occupancy", "0.5"], "--multiplier -1.0: must be >= 0"),
    ([], "give --preset"),
])
def test_bad_custom_values(tmp_path, flags, problem):
    marker, command = never_started(tmp_path)
    assert_error(lab("run", "--alloc", "glibc", *flags, "--profile", valid_profile(tmp_path), *command), problem)
    assert not marker.exists()


BAD_TRACES = [
    ("missing", None, "no such trace file"),
    ("short", b"STRTRACE", "too short to be a trace"),
    ("magic", b"NOTATRACE" + bytes(100), "not a strata trace"),
    ("version", b"STRTRACE" + (9).to_bytes(4, "little") + bytes(100), "unsupported trace version 9"),
    ("truncated", b"STRTRACE" + (1).to_bytes(4, "little") + bytes(100), "incomplete"),
]


@pytest.mark.parametrize("name,content,problem", BAD_TRACES, ids=[b[0] for b in BAD_TRACES])
def test_bad_trace_is_named(tmp_path, name, content, problem):
    path = tmp_path / f"{name}.trace"
    if content is not None:
        path.write_bytes(content)
    assert_error(lab("trace", "replay", path, "--alloc", "glibc"), path, problem)


def test_corrupt_trace_body_is_reported_by_the_replayer(tmp_path):
    trace = tmp_path / "t.trace"
    assert lab("trace", "record", "-o", trace, "--", PATTERNS, "basic").returncode == 0
    data = bytearray(trace.read_bytes())
    data[16] = 99  # first record's operation code
    trace.write_bytes(bytes(data))
    result = lab("trace", "replay", trace)
    assert result.returncode == 1
    assert "unknown operation code" in result.stderr and str(trace) in result.stderr


@pytest.mark.parametrize("mode,status", [("exit3", "exited with status 3"), ("crash", "killed by SIGABRT")])
@pytest.mark.parametrize("sub", [["profile", "-o", "OUT"], ["frag"], ["run", "--alloc", "jemalloc", "--preset", "Adv0"],
                                 ["trace", "record", "-o", "OUT"]])
def test_failing_program_status_is_reported(tmp_path, sub, mode, status):
    sub = [str(tmp_path / "out") if a == "OUT" else a for a in sub]
    result = lab(*sub, "--", PATTERNS, mode)
    assert_error(result, status, status=1)
    if mode == "exit3" and sub[0] == "profile":  # the profile of a completed run is kept, and marked
        assert "covers the run up to that exit" in result.stderr
        assert json.loads((tmp_path / "out").read_text())["exit_status"] == {"exit_code": 3}
    if mode == "crash" and sub[0] in ("profile", "trace"):
        assert not (tmp_path / "out").exists()


def test_missing_command_and_unstartable_command(tmp_path):
    assert_error(lab("profile", "-o", tmp_path / "x.json", "--"), "no command given")
    assert_error(lab("frag", "--", tmp_path / "no-such-program"), "cannot start", "no-such-program")


def test_missing_build_is_a_clear_error(tmp_path):
    marker, command = never_started(tmp_path)
    result = lab("profile", "-o", tmp_path / "x.json", *command, env={"STRATA_LAB_BUILD_DIR": tmp_path})
    assert_error(result, "libstrata-profile.so is missing", "make build")
    assert not marker.exists()


def test_bad_cutoff_and_interval(tmp_path):
    marker, command = never_started(tmp_path)
    assert_error(lab("profile", "--cutoff", "0", *command), "--cutoff 0")
    assert_error(lab("frag", "--interval", "0", *command), "--interval 0")
    assert not marker.exists()


def test_profiler_shim_rejects_a_bad_cutoff_naming_the_variable(tmp_path):
    from conftest import run_with_shims
    result = run_with_shims(["profile"], [PATTERNS, "basic"], {"STRATA_LAB_PROFILE_CUTOFF": "lots",
                                                              "STRATA_LAB_PROFILE_OUT": tmp_path / "p.json"})
    assert result.returncode == 2
    assert "STRATA_LAB_PROFILE_CUTOFF" in result.stderr and "lots" in result.stderr


def test_an_output_that_is_not_a_regular_file_is_written_in_place(tmp_path):
    """STRATA_LAB_PROFILE_OUT=/dev/null once replaced /dev/null with a regular file (the profile is written to a
    temporary file renamed over its path). A FIFO stands in for the device here: it must stay a FIFO and get the
    profile."""
    import os
    import stat
    import threading
    from conftest import PATTERNS, run_with_shims
    fifo = tmp_path / "profile.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo).read()), daemon=True)
    reader.start()
    result = run_with_shims(["profile"], [PATTERNS, "basic"], {"STRATA_LAB_PROFILE_OUT": str(fifo)})
    reader.join(timeout=60)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received and '"format": "strata-profile"' in received[0]
    assert not (tmp_path / "profile.fifo.tmp").exists()
