"""Workloads (lab/strata_lab/workloads.py, docs/workloads.md): the registry,
every error of `strata-lab workload`, every registered workload in every mode
under glibc and libstrata with its stored checksum, the real programs'
switch of their own allocator, and how failing programs are reported."""
import json
import re
import time
from pathlib import Path

import pytest

from conftest import BUILD, REPO, lab
from strata_lab import workloads as W
from strata_lab.errors import LabError, ProgramFailed

REGISTRY = W.registry()
NATIVE = [w for w in REGISTRY.values() if w.kind == "native"]
PROGRAMS = [w for w in REGISTRY.values() if w.kind == "program"]
PYPERFORMANCE = ["richards", "nbody", "deltablue", "raytrace", "chaos", "go", "hexiom", "float", "json_dumps",
                 "json_loads", "pickle_pure_python", "unpack_sequence", "regex_v8", "spectral_norm"]


@pytest.fixture(autouse=True)
def build_dir(monkeypatch):
    monkeypatch.setenv("STRATA_LAB_BUILD_DIR", str(BUILD))


# --- the registry ---------------------------------------------------------

def test_registry_holds_every_workload_json_in_name_order():
    on_disk = sorted(p.parent.name for p in (REPO / "workloads").glob("*/workload.json"))
    assert list(REGISTRY) == on_disk
    for workload in REGISTRY.values():
        assert workload.modes and set(workload.modes) <= set(W.MODES)
        assert workload.default_scale > 0 and workload.imitates and workload.paper
        assert re.fullmatch(r"[0-9a-f]{16}", workload.test["checksum"]), workload.name


def test_workloads_are_values_usable_as_keys():
    again = W.registry()
    assert {w: w.name for w in REGISTRY.values()}[again["sqlite"]] == "sqlite"


def test_the_real_programs_are_registered():
    benchmarks = {w.program.get("benchmark") for w in PROGRAMS if w.program["runner"] == "pyperformance"}
    assert set(PYPERFORMANCE) <= benchmarks
    assert "sqlite" in REGISTRY and REGISTRY["sqlite"].modes == ("custom", "naive")
    pools = [w for w in PROGRAMS if w.program["runner"] in ("pyperformance", "sqlite") or w.name == "gslice"]
    assert len(pools) == 16 and all(w.modes == ("custom", "naive") for w in pools)
    # Debian's programs whose allocator cannot be switched off (clang, gcc) or who have none (perl, bc, lua)
    assert {w.name: w.modes for w in PROGRAMS if w not in pools} == {
        "clang": ("custom",), "gcc": ("custom",), "perl": ("naive",), "bc": ("naive",), "lua": ("naive",)}


def test_versions_name_the_programs():
    python = REGISTRY["py-richards"].versions()
    assert re.fullmatch(r"Python 3\.\d+\.\d+", python["python3"]) and python["pyperformance"]
    sqlite = REGISTRY["sqlite"].versions()
    assert re.fullmatch(r"3\.\d+\.\d+", sqlite["sqlite"]) and sqlite["python3"] == python["python3"]
    for workload in NATIVE:
        assert workload.versions() == {}


def test_checksum_of_reads_only_a_last_checksum_line():
    assert W.checksum_of("one summary line\nchecksum 00ff00ff00ff00ff\n") == "00ff00ff00ff00ff"
    assert W.checksum_of("checksum 00ff00ff00ff00ff\nmore output\n") is None
    assert W.checksum_of("checksum xyz\n") is None
    assert W.checksum_of("") is None


def write_workload(root: Path, name: str, script: str = None, fields: dict = None, **more) -> Path:
    """A workload directory under root: workload.json (fields over defaults) and run.sh."""
    fields = dict(fields or {}, **more)
    directory = root / name
    directory.mkdir(parents=True)
    if script is not None:
        (directory / "run.sh").write_text(script)
    spec = {"name": name, "imitates": f"the test program {name}", "paper": "none", "kind": "program",
            "modes": ["custom", "naive"], "default_scale": 2, "test": {"scale": 1, "seed": 1},
            "program": {"runner": "command", "argv": ["/bin/sh", "{dir}/run.sh", "{mode}", "{scale}", "{seed}"],
                        "mode_env": {"naive": {"FAKE_NAIVE": "1"}}}}
    spec.update(fields)
    (directory / "workload.json").write_text(json.dumps(spec))
    return directory


BAD_SPECS = [
    ({"name": "other"}, "field 'name' is 'other' but the directory is 'bad'"),
    ({"kind": "plugin"}, "field 'kind' is 'plugin'"),
    ({"modes": ["custom", "turbo"]}, "field 'modes'"),
    ({"modes": []}, "field 'modes'"),
    ({"default_scale": 0}, "field 'default_scale' must be a positive integer"),
    ({"default_scale": "3"}, "field 'default_scale' must be int"),
    ({"test": {"scale": 0, "seed": 1}}, "field 'test.scale'"),
    ({"kind": "native"}, "field 'test.checksum' must be 16 lowercase hex digits"),
    ({"program": {"runner": "java"}}, "field 'program.runner' is 'java'"),
    ({"program": {"runner": "command", "argv": []}}, "field 'program.argv'"),
    ({"imitates": ""}, "field 'imitates' is empty"),
]


@pytest.mark.parametrize("fields,problem", BAD_SPECS, ids=[p for _, p in BAD_SPECS])
def test_a_malformed_workload_json_is_named(tmp_path, fields, problem):
    write_workload(tmp_path, "bad", "", fields)
    with pytest.raises(LabError) as error:
        W.registry(tmp_path)
    assert str(tmp_path / "bad" / "workload.json") in str(error.value) and problem in str(error.value)


def test_a_native_workload_not_built_is_listed_but_not_run(tmp_path, monkeypatch):
    write_workload(tmp_path, "unbuilt", kind="native", test={"scale": 1, "seed": 1, "checksum": "0" * 16})
    monkeypatch.setenv("STRATA_LAB_BUILD_DIR", str(tmp_path / "build"))
    workload = W.registry(tmp_path)["unbuilt"]
    with pytest.raises(LabError, match=re.escape(str(tmp_path / "build/workloads/strata-wl-unbuilt"))):
        workload.invocation("custom", 1, 1)


# --- the command line -----------------------------------------------------

def test_workloads_lists_each_with_its_modes_and_what_it_imitates():
    result = lab("workloads")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(REGISTRY)
    for line, workload in zip(lines, REGISTRY.values()):
        assert line.split()[0] == workload.name
        assert ",".join(workload.modes) in line and workload.imitates in line


@pytest.fixture
def marker_registry(tmp_path):
    """A registry whose one workload leaves a marker file if it ever starts."""
    marker = tmp_path / "started"
    write_workload(tmp_path / "reg", "marker", f"touch {marker}\necho checksum 0123456789abcdef\n")
    return tmp_path / "reg", marker


CLI_ERRORS = [
    (["nosuch", "--mode", "custom"], "unknown workload 'nosuch'; known: marker"),
    (["marker", "--mode", "turbo"], "unknown mode 'turbo'"),
    (["marker", "--mode", "reap"], "workload marker has no mode 'reap'; it has: custom, naive"),
    (["marker", "--mode", "custom", "--alloc", "nosuchalloc"], "unknown allocator 'nosuchalloc'"),
    (["marker", "--mode", "custom", "--scale", "0"], "--scale '0': must be a positive integer"),
    (["marker", "--mode", "custom", "--scale", "-2"], "--scale '-2': must be a positive integer"),
    (["marker", "--mode", "custom", "--scale", "abc"], "--scale 'abc': must be a positive integer"),
    (["marker", "--mode", "custom", "--scale", "1.5"], "--scale '1.5': must be a positive integer"),
    (["marker", "--mode", "custom", "--seed", "-1"], "--seed -1: must be a non-negative integer"),
    (["marker", "--mode", "custom", "--preset", "Adv7"], "unknown preset 'Adv7'"),
    (["marker", "--mode", "custom", "--timeout", "0"], "--timeout 0.0: must be > 0 seconds"),
    (["marker", "--mode", "custom", "--preset", "Adv1", "--profile", "/nonexistent.json"],
     "no such profile file"),
]


@pytest.mark.parametrize("args,message", CLI_ERRORS, ids=[m for _, m in CLI_ERRORS])
def test_bad_input_is_an_error_before_anything_runs(marker_registry, args, message):
    registry_dir, marker = marker_registry
    result = lab("workload", *args, "--workloads-dir", registry_dir)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert not marker.exists()


def test_bad_input_in_the_api_raises_before_anything_runs(marker_registry):
    registry_dir, marker = marker_registry
    workload = W.registry(registry_dir)["marker"]
    for call in [lambda: W.run(workload, "reap", 1), lambda: W.run(workload, "custom", 0),
                 lambda: W.run(workload, "custom", True), lambda: W.run(workload, "custom", 1, -1),
                 lambda: W.run(workload, "custom", 1, allocator="nosuch"),
                 lambda: W.run(workload, "custom", 1, preset="Adv3"),  # needs a profile
                 lambda: W.run("nosuch", "custom", 1)]:
        with pytest.raises(LabError):
            call()
    assert not marker.exists()


def test_the_cli_runs_a_workload_and_prints_its_checksum(marker_registry, tmp_path):
    registry_dir, marker = marker_registry
    out = tmp_path / "result.json"
    result = lab("workload", "marker", "--mode", "naive", "--workloads-dir", registry_dir, "--json", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "checksum 0123456789abcdef"
    data = json.loads(out.read_text())
    assert data["status"] == "ok" and data["scale"] == 2 and data["program_seconds"] > 0  # the default scale
    assert marker.exists()


# --- failing programs -----------------------------------------------------

FAILURES = [
    ("crash", "echo about to crash >&2\nkill -SEGV $$\n", "crashed", "killed by SIGSEGV"),
    ("exit3", "echo checksum 0123456789abcdef\necho broken >&2\nexit 3\n", "failed", "exited with status 3"),
    ("nosum", "echo no checksum here\n", "failed", "printed no 'checksum <hex>' line"),
]


@pytest.mark.parametrize("name,script,status,text", FAILURES, ids=[f[0] for f in FAILURES])
def test_a_failing_program_is_reported_with_its_status_never_a_time(tmp_path, name, script, status, text):
    write_workload(tmp_path, name, script)
    result = W.run(W.registry(tmp_path)[name], "custom", 1, 1, "glibc", "Adv0")
    assert result["status"] == status and text in result["exit_status"]
    assert result["program_seconds"] is None and result["checksum"] is None
    cli = lab("workload", name, "--mode", "custom", "--scale", "1", "--workloads-dir", tmp_path)
    assert cli.returncode == 1 and status in cli.stderr and text in cli.stderr
    if name != "nosum":
        assert ("about to crash" if name == "crash" else "broken") in result["stderr_tail"] + cli.stderr


def test_profiling_a_failing_program_raises_with_its_status(tmp_path):
    write_workload(tmp_path, "crash", "kill -SEGV $$\n")
    with pytest.raises(ProgramFailed, match="killed by SIGSEGV under the profiler"):
        W.profile(W.registry(tmp_path)["crash"], "custom", 1, 1, tmp_path / "p.json")


def test_a_program_past_its_timeout_is_killed_with_its_children(tmp_path):
    child_pid = tmp_path / "child.pid"
    write_workload(tmp_path, "hang", f"sleep 60 &\necho $! > {child_pid}\nwait\n")
    start = time.monotonic()
    result = W.run(W.registry(tmp_path)["hang"], "custom", 1, timeout_s=0.5)
    assert result["status"] == "timeout" and result["program_seconds"] is None
    assert time.monotonic() - start < 10
    state = Path(f"/proc/{int(child_pid.read_text())}/stat")
    for _ in range(50):  # the background sleep went with the group: gone, or a zombie not yet reaped
        if not state.exists() or state.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the program's child is still running: {state.read_text()}")


def test_the_mode_reaches_the_program_and_the_run_reports_everything(tmp_path):
    write_workload(tmp_path, "echo", 'echo "mode $1 scale $2 seed $3 naive=${FAKE_NAIVE:-0}"\n'
                   'echo checksum 00000000000000$2$3\n')
    workload = W.registry(tmp_path)["echo"]
    result = W.run(workload, "naive", 4, 5, "strata", "Adv0")
    assert result["status"] == "ok" and result["checksum"] == "0000000000000045"
    assert set(result) >= {"workload", "mode", "scale", "seed", "allocator", "preset", "status", "exit_status",
                           "checksum", "program_seconds", "program_cpu_seconds", "precondition_seconds", "wall_seconds",
                           "peak_rss_bytes", "peak_heap_resident_bytes", "kept_bytes", "stderr_tail"}
    assert (result["allocator"], result["preset"], result["kept_bytes"]) == ("strata", "Adv0", 0)
    assert 0 < result["program_seconds"] <= result["wall_seconds"] and result["peak_rss_bytes"] > 0
    assert 0 < result["program_cpu_seconds"] <= result["cpu_seconds"]   # the shim's share of the process's CPU time
    assert workload.invocation("naive", 4, 5).env == {"FAKE_NAIVE": "1"}
    assert workload.invocation("custom", 4, 5).env == {}


def test_peak_rss_is_the_programs_own_not_the_lab_processes(tmp_path):
    """Linux counts in a child's ru_maxrss the pre-exec copy of its parent
    (this test process); the run reports the program's own VmHWM instead."""
    import resource
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    ballast = bytearray(max(0, 200 * 2**20 - own))  # this process: at least 200 MiB resident
    ballast[::4096] = b"x" * len(ballast[::4096])
    write_workload(tmp_path, "small", "echo checksum 0000000000000001\n")  # /bin/sh: a few MiB
    result = W.run(W.registry(tmp_path)["small"], "naive", 1, 1, "glibc", "Adv0")
    assert result["status"] == "ok"
    assert 0 < result["peak_rss_bytes"] < 50 * 2**20, result["peak_rss_bytes"]
    del ballast


# --- every registered workload: same checksum in every mode and allocator ---

def test_every_native_workload_is_built():
    missing = [str(BUILD / "workloads" / f"strata-wl-{w.name}") for w in NATIVE
               if not (BUILD / "workloads" / f"strata-wl-{w.name}").is_file()]
    assert not missing, f"registered native workloads not built: {missing}"


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_mode_under_glibc_and_libstrata_gives_the_stored_checksum(name):
    workload = REGISTRY[name]
    expected = workload.test["checksum"]
    for allocator in ("glibc", "strata"):
        for mode in workload.modes:
            result = W.run(workload, mode, workload.test["scale"], workload.test["seed"], allocator, "Adv0",
                           timeout_s=60)
            assert result["status"] == "ok", f"{name} {mode} {allocator}: {result['exit_status']}\n" \
                                             f"{result['stderr_tail']}"
            assert result["checksum"] == expected, f"{name} {mode} {allocator}"


def test_a_preconditioned_run_keeps_the_checksum(tmp_path):
    workload = REGISTRY["py-float"]
    summary = W.profile(workload, "naive", 1, 1, tmp_path / "p.json")
    result = W.run(workload, "custom", 1, 1, "glibc", "Adv3", profile_path=tmp_path / "p.json")
    assert result["status"] == "ok" and result["checksum"] == workload.test["checksum"]
    assert result["kept_bytes"] > 0 and summary["checksum"] == workload.test["checksum"]


# --- the real programs really switch their allocator off -------------------

@pytest.mark.parametrize("name", ["py-richards", "sqlite", "gslice"])
def test_naive_mode_sends_the_programs_small_objects_to_malloc(name, tmp_path):
    """pymalloc and the lookaside serve small objects without malloc: in naive
    mode those objects appear in malloc's profile."""
    custom = W.profile(name, "custom", 1, 1, tmp_path / "custom.json")
    naive = W.profile(name, "naive", 1, 1, tmp_path / "naive.json")
    assert naive["total_objects"] > 2 * custom["total_objects"], (custom, naive)
    assert naive["average_size"] < custom["average_size"]
    data = json.loads((tmp_path / "naive.json").read_text())
    assert data["workload"] == name and data["mode"] == "naive" and data["versions"]


def test_stats_give_table3_with_the_papers_row(tmp_path):
    write_workload(tmp_path, "boxed-sim", "echo checksum 0123456789abcdef\n")
    result = lab("workloads", "--stats", "--workloads-dir", tmp_path, "--markdown", tmp_path / "t.md")
    assert result.returncode == 0, result.stderr
    table = (tmp_path / "t.md").read_text()
    assert table == result.stdout
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| workload | mode, scale | total objects")
    assert rows[1].startswith("| boxed-sim | naive, 2 |")
    assert rows[2] == "| ↳ *paper: boxed-sim* | | *52,203* | *4,865* | *15* | *777,913* | *301,987* | *2.6* |"


def test_the_catalogue_in_markdown_has_a_row_per_workload():
    result = lab("workloads", "--format", "markdown")
    assert result.returncode == 0, result.stderr
    rows = result.stdout.splitlines()[2:]
    assert [row.split("|")[1].strip() for row in rows] == [f"`{name}`" for name in REGISTRY]


@pytest.mark.parametrize("args,message", [(["--only", "sqlite"], "--only goes with --stats"),
                                          (["--stats", "--only", "nosuch"], "--only: unknown workload 'nosuch'")])
def test_bad_stats_options_are_errors(args, message):
    result = lab("workloads", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr


@pytest.mark.parametrize("name", ["py-richards", "sqlite"])
def test_work_grows_linearly_with_the_scale(name, tmp_path):
    """Each step of scale adds the same number of objects (to 10%): no part of
    the work is quadratic in the scale."""
    objects = [W.profile(name, "naive", scale, 1, tmp_path / f"{scale}.json")["total_objects"] for scale in (1, 2, 4)]
    step = objects[1] - objects[0]
    assert step > 0 and abs((objects[2] - objects[1]) - 2 * step) <= 0.1 * 2 * step, objects
