"""Workloads (docs/workloads.md, the contract of issue 8): programs the lab
runs in a custom, naive or reap mode, described by workloads/<name>/workload.json.

Two kinds:
  native   strata-wl-<name>, built by CMake into <build>/workloads/ (ours, C++);
  program  a real program with its own allocator, switched off in naive mode:
           Debian's python3 (pymalloc; naive = PYTHONMALLOC=malloc) running a
           pyperformance benchmark, and SQLite (lookaside; naive = no lookaside
           slots). The "program" object of workload.json names how it is run.

The API the evaluation builds on: registry(), Workload.invocation/versions,
checksum_of, profile and run. A run never raises for a failing program (its
dict says "crashed", "failed" or "timeout"); bad input raises LabError before
anything starts."""
import functools
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from . import allocators, frag, paths, precondition, profile as profiler, runner
from .errors import LabError, ProgramFailed

WORKLOADS_DIR = paths.REPO_ROOT / "workloads"
MODES = ("custom", "naive", "reap")
KINDS = ("native", "program")
DEBIAN_PYTHON = "/usr/bin/python3"  # tools/apt/workloads.txt; not the lab's own interpreter
STATUSES = ("ok", "crashed", "timeout", "failed")


@dataclass(frozen=True)
class Invocation:
    argv: list
    env: dict            # added to the lab's environment (with the shims' LD_PRELOAD)
    cwd: Optional[str]


def checksum_of(stdout: str) -> Optional[str]:
    """The hex digits of a last line "checksum <hex>", else None."""
    lines = stdout.rstrip().splitlines()
    match = re.fullmatch(r"checksum ([0-9a-f]+)", lines[-1].strip()) if lines else None
    return match.group(1) if match else None


def _positive_int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise LabError(f"{what} {value!r}: must be a positive integer")
    return value


def _seed(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LabError(f"seed {value!r}: must be a non-negative integer")
    return value


@dataclass(frozen=True)
class Workload:
    name: str
    imitates: str
    paper: str
    kind: str
    modes: tuple
    default_scale: int
    directory: Path
    test: dict = field(default_factory=dict, compare=False)     # {"scale", "seed"[, "checksum"]}
    program: dict = field(default_factory=dict, compare=False)  # kind "program": how it is run

    def check(self, mode: str, scale, seed) -> None:
        """LabError unless mode, scale and seed are valid for this workload."""
        if mode not in MODES:
            raise LabError(f"unknown mode '{mode}'; modes are {', '.join(MODES)}")
        if mode not in self.modes:
            raise LabError(f"workload {self.name} has no mode '{mode}'; it has: {', '.join(self.modes)}")
        _positive_int(scale, "scale")
        _seed(seed)

    def invocation(self, mode: str, scale: int, seed: int = 1) -> Invocation:
        """How to run it; LabError on a bad mode or scale, or a missing piece."""
        self.check(mode, scale, seed)
        if self.kind == "native":
            binary = paths.build_dir() / "workloads" / f"strata-wl-{self.name}"
            if not binary.is_file():
                raise LabError(f"workload {self.name}: {binary} is missing (build it: "
                               f"`cmake --build {paths.build_dir()} --target strata-wl-{self.name}`)")
            return Invocation([str(binary), "--mode", mode, "--scale", str(scale), "--seed", str(seed)], {}, None)
        return _PROGRAMS[self.program["runner"]].invocation(self, mode, scale, seed)

    def versions(self) -> dict:
        """The exact versions of the real program behind it ({} for native ones)."""
        if self.kind == "native":
            return {}
        return _PROGRAMS[self.program["runner"]].versions(self)


# ---------------------------------------------------------------------------
# Real programs. Each runner validates its "program" object when the registry
# is read, and builds the command line of one run.

def _run_text(argv, env=None) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise LabError(f"cannot run {' '.join(argv)}: {error}") from None
    if done.returncode != 0:
        raise LabError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    return (done.stdout + done.stderr).strip()


def _debian_python() -> str:
    if not os.access(DEBIAN_PYTHON, os.X_OK):
        raise LabError(f"{DEBIAN_PYTHON} is missing: install Debian's python3 (tools/apt/workloads.txt)")
    return DEBIAN_PYTHON


@functools.lru_cache(maxsize=None)
def _python_version() -> str:
    return _run_text([_debian_python(), "--version"])


def _package_dir(name: str) -> Path:
    """Where the lab's environment has the package `name` (installed by make setup)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise LabError(f"the Python package {name} is not installed in the lab's environment "
                       "(run `make setup`: it is in lab/pyproject.toml)")
    return Path(list(spec.submodule_search_locations)[0])


def _python_path(name: str, packages: list) -> str:
    """A directory holding only `packages` (symlinks into the lab's venv), for
    PYTHONPATH: Debian's python3 then imports them and nothing else of the venv.
    The venv's packages used this way are pure Python or built for CPython 3.11."""
    directory = paths.build_dir() / "workloads" / "python-path" / name
    directory.mkdir(parents=True, exist_ok=True)
    for package in packages:
        target = _package_dir(package)
        link = directory / package
        if link.is_symlink() and Path(os.readlink(link)) == target:
            continue
        temporary = directory / f".{package}.{os.getpid()}"
        if temporary.is_symlink():
            temporary.unlink()
        temporary.symlink_to(target)
        os.replace(temporary, link)  # atomic: parallel runs see the old or the new link
    return str(directory)


def _python_env(pythonpath: str, seed: int, pymalloc: bool) -> dict:
    # PYTHONHASHSEED makes str hashing, and so set/dict layouts and allocation
    # patterns, repeat for a seed. PYTHONMALLOC is set in both modes so that a
    # PYTHONMALLOC in the caller's environment cannot leak in ("pymalloc" is
    # what a release build of CPython uses anyway).
    return {"PYTHONPATH": pythonpath, "PYTHONHASHSEED": str(seed % 2**32),
            "PYTHONMALLOC": "pymalloc" if pymalloc else "malloc"}


class _Pyperformance:
    """A pyperformance benchmark under Debian's python3, in this process, a fixed
    number of loops (workloads/python/pyperformance_harness.py). scale = loops."""
    harness = WORKLOADS_DIR / "python" / "pyperformance_harness.py"

    @staticmethod
    def validate(spec: dict, where: str) -> None:
        _field(spec, "benchmark", str, where)
        for key in ("script", "result"):
            if key in spec:
                _field(spec, key, str, where)
        args = spec.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise LabError(f"{where}: field 'program.args' must be a list of strings")

    def script(self, workload: Workload) -> Path:
        benchmarks = _package_dir("pyperformance") / "data-files" / "benchmarks"
        script = benchmarks / f"bm_{workload.program.get('script', workload.program['benchmark'])}" / "run_benchmark.py"
        if not script.is_file():
            raise LabError(f"workload {workload.name}: {script} is missing (is pyperformance's version the one "
                           "lab/pyproject.toml pins?)")
        return script

    def invocation(self, workload: Workload, mode: str, scale: int, seed: int) -> Invocation:
        spec = workload.program
        argv = [_debian_python(), "-s", str(self.harness), str(self.script(workload)), spec["benchmark"],
                str(scale), str(seed)]
        if "result" in spec:
            argv.append(spec["result"])
        if spec.get("args"):
            argv += ["--"] + spec["args"]
        return Invocation(argv, _python_env(_python_path("pyperformance", ["pyperf"]), seed, mode == "custom"),
                          None)

    def versions(self, workload: Workload) -> dict:
        from importlib.metadata import version
        return {"python3": _python_version(), "pyperformance": version("pyperformance"),
                "pyperf": version("pyperf")}


class _Sqlite:
    """SQLite (apsw's bundled build, with lookaside) running a SQL script that
    workloads/sqlite/gen_sql.py generates from the seed and the scale; naive =
    no lookaside slots. The script is generated once into the build directory."""

    @staticmethod
    def validate(spec: dict, where: str) -> None:
        pass

    @staticmethod
    def _script(workload: Workload, scale: int, seed: int) -> Path:
        generator = workload.directory / "gen_sql.py"
        if not generator.is_file():
            raise LabError(f"workload {workload.name}: {generator} is missing")
        source_hash = hashlib.sha256(generator.read_bytes()).hexdigest()[:12]
        inputs = paths.build_dir() / "workloads" / "inputs"
        script = inputs / f"{workload.name}-scale{scale}-seed{seed}-{source_hash}.sql"
        if not script.is_file():
            inputs.mkdir(parents=True, exist_ok=True)
            spec = importlib.util.spec_from_file_location(f"strata_wl_{workload.name}_gen", generator)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            with tempfile.NamedTemporaryFile("w", dir=inputs, suffix=".tmp", delete=False) as out:
                module.generate(scale, seed, out)
            os.replace(out.name, script)  # atomic: a parallel run never reads half a script
        return script

    def invocation(self, workload: Workload, mode: str, scale: int, seed: int) -> Invocation:
        argv = [_debian_python(), "-s", str(workload.directory / "run_sql.py"),
                str(self._script(workload, scale, seed))] + (["--no-lookaside"] if mode == "naive" else [])
        return Invocation(argv, _python_env(_python_path("sqlite", ["apsw"]), seed, True), None)

    def versions(self, workload: Workload) -> dict:
        env = dict(os.environ, **_python_env(_python_path("sqlite", ["apsw"]), 0, True))
        text = _run_text([_debian_python(), "-s", "-c",
                          "import apsw; print(apsw.sqlite_lib_version(), apsw.apsw_version())"], env)
        sqlite, apsw = text.split()
        return {"python3": _python_version(), "sqlite": sqlite, "apsw": apsw}


class _Command:
    """Any command: "argv" and optional "env" and "mode_env" ({mode: {VAR: value}}),
    with {dir}, {mode}, {scale}, {seed} and {python} replaced. Used by tests."""

    @staticmethod
    def validate(spec: dict, where: str) -> None:
        argv = spec.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise LabError(f"{where}: field 'program.argv' must be a non-empty list of strings")
        for key in ("env", "mode_env"):
            if not isinstance(spec.get(key, {}), dict):
                raise LabError(f"{where}: field 'program.{key}' must be an object")

    def invocation(self, workload: Workload, mode: str, scale: int, seed: int) -> Invocation:
        values = {"dir": str(workload.directory), "mode": mode, "scale": str(scale), "seed": str(seed),
                  "python": sys.executable}

        def fill(text):
            for key, value in values.items():
                text = text.replace("{" + key + "}", value)
            return text
        env = {k: fill(str(v)) for k, v in workload.program.get("env", {}).items()}
        env.update({k: fill(str(v)) for k, v in workload.program.get("mode_env", {}).get(mode, {}).items()})
        return Invocation([fill(a) for a in workload.program["argv"]], env, None)

    def versions(self, workload: Workload) -> dict:
        return {}


_PROGRAMS = {"pyperformance": _Pyperformance(), "sqlite": _Sqlite(), "command": _Command()}


# ---------------------------------------------------------------------------
# The registry: every workloads/*/workload.json.

def _field(data: dict, key: str, kind, where: str):
    value = data.get(key)
    if value is None:
        raise LabError(f"{where}: missing field '{key}'")
    if not isinstance(value, kind) or isinstance(value, bool):
        raise LabError(f"{where}: field '{key}' must be {'a string' if kind is str else kind.__name__}")
    if kind is str and not value.strip():
        raise LabError(f"{where}: field '{key}' is empty")
    return value


def _load(path: Path) -> Workload:
    where = str(path)
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise LabError(f"{where}: not valid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(data, dict):
        raise LabError(f"{where}: expected a JSON object")
    name = _field(data, "name", str, where)
    if name != path.parent.name:
        raise LabError(f"{where}: field 'name' is '{name}' but the directory is '{path.parent.name}'")
    kind = _field(data, "kind", str, where)
    if kind not in KINDS:
        raise LabError(f"{where}: field 'kind' is '{kind}'; expected one of {', '.join(KINDS)}")
    modes = _field(data, "modes", list, where)
    if not modes or any(m not in MODES for m in modes) or len(set(modes)) != len(modes):
        raise LabError(f"{where}: field 'modes' must list distinct modes among {', '.join(MODES)}")
    default_scale = _field(data, "default_scale", int, where)
    if default_scale <= 0:
        raise LabError(f"{where}: field 'default_scale' must be a positive integer")
    test = _field(data, "test", dict, where)
    if not isinstance(test.get("scale"), int) or isinstance(test.get("scale"), bool) or test["scale"] <= 0:
        raise LabError(f"{where}: field 'test.scale' must be a positive integer")
    if not isinstance(test.get("seed"), int) or isinstance(test.get("seed"), bool) or test["seed"] < 0:
        raise LabError(f"{where}: field 'test.seed' must be a non-negative integer")
    checksum = test.get("checksum")
    if (kind == "native" or checksum is not None) and not (isinstance(checksum, str)
                                                          and re.fullmatch(r"[0-9a-f]{16}", checksum)):
        raise LabError(f"{where}: field 'test.checksum' must be 16 lowercase hex digits")
    program = data.get("program", {})
    if kind == "program":
        program = _field(data, "program", dict, where)
        runner_name = _field(program, "runner", str, where + " (program)")
        if runner_name not in _PROGRAMS:
            raise LabError(f"{where}: field 'program.runner' is '{runner_name}'; expected one of "
                           f"{', '.join(_PROGRAMS)}")
        _PROGRAMS[runner_name].validate(program, where)
    return Workload(name, _field(data, "imitates", str, where), _field(data, "paper", str, where), kind,
                    tuple(modes), default_scale, path.parent, dict(test), dict(program))


def registry(directory: Optional[Union[str, Path]] = None) -> dict:
    """name -> Workload for every <directory>/*/workload.json (default: the
    repository's workloads/), in name order. LabError names a malformed file."""
    root = Path(directory) if directory is not None else WORKLOADS_DIR
    found = {}
    for path in sorted(root.glob("*/workload.json")):
        workload = _load(path)
        found[workload.name] = workload
    return dict(sorted(found.items()))


def lookup(name: str, directory=None) -> Workload:
    known = registry(directory)
    if name not in known:
        raise LabError(f"unknown workload '{name}'; known: {', '.join(known) or '(none)'}")
    return known[name]


def _resolve(workload, directory=None) -> Workload:
    return workload if isinstance(workload, Workload) else lookup(workload, directory)


def _allocator(allocator) -> allocators.Allocator:
    if isinstance(allocator, allocators.Allocator):
        return allocator
    return allocators.resolve(allocator or "glibc")


# ---------------------------------------------------------------------------
# Running.

def profile(workload, mode: str, scale: int, seed: int, out_path, allocator="glibc",
            timeout_s: Optional[float] = None) -> dict:
    """Runs the workload under the profiler (`strata-lab profile`'s shim) and
    writes its profile JSON to out_path. Returns the 2002 paper's Table 3
    figures and where the profile is. ProgramFailed if the program fails."""
    workload = _resolve(workload)
    invocation = workload.invocation(mode, scale, seed)
    allocator = _allocator(allocator)
    out_path = Path(out_path)
    preload = [str(paths.shim("profile"))] + allocator.preload()
    with tempfile.TemporaryDirectory(prefix="strata-wl-profile-") as tmp:
        variables = dict(invocation.env, STRATA_LAB_PROFILE_OUT=f"{tmp}/profile.%p.json")
        result = runner.run(invocation.argv, preload, variables, capture=True, timeout_s=timeout_s,
                            cwd=invocation.cwd)
        if not result.ok:
            raise ProgramFailed(f"workload {workload.name} --mode {mode} --scale {scale} --seed {seed} "
                                f"{result.status()} under the profiler: {(result.stderr_tail or '').strip()[-500:]}")
        if not (Path(tmp) / f"profile.{result.pid}.json").exists():
            raise LabError(f"workload {workload.name}: the program wrote no profile (statically linked?)")
        children = profiler.collect(Path(tmp), result.pid, out_path, ".json")
    data = json.loads(out_path.read_text())
    data.update({"command": invocation.argv, "allocator": allocator.name, "exit_status": result.status_json(),
                 "workload": workload.name, "mode": mode, "scale": scale, "seed": seed,
                 "checksum": checksum_of(result.stdout or ""), "versions": workload.versions()})
    out_path.write_text(json.dumps(data, indent=2) + "\n")
    data = profiler.load(out_path)
    peak = data["peak_live_bytes"]
    return {"workload": workload.name, "mode": mode, "scale": scale, "seed": seed, "path": str(out_path),
            "children": [str(c) for c in children], "total_objects": data["total_objects"],
            "total_bytes": data["total_bytes"], "average_size": data["average_size"],
            "peak_live_objects": data["peak_live_objects"], "peak_live_bytes": peak,
            "total_to_peak_bytes": data["total_bytes"] / peak if peak else None,
            "realloc_calls": data["realloc_calls"], "free_calls": data["free_calls"],
            "checksum": data["checksum"]}


def _status(result: runner.RunResult, checksum: Optional[str], report: Optional[dict]):
    """(status, exit_status text) of a finished run."""
    if result.timed_out:
        return "timeout", result.status()
    if result.returncode < 0:
        return "crashed", result.status()
    if result.returncode > 0:
        return "failed", result.status()
    if checksum is None:
        return "failed", "exited with status 0 but printed no 'checksum <hex>' line last"
    if report is None or report.get("program_ns") is None:
        return "failed", "exited with status 0 but the preconditioner recorded no exit time"
    return "ok", result.status()


def run(workload, mode: str, scale: int, seed: int = 1, allocator="glibc", preset: Optional[str] = "Adv0",
        profile_path=None, timeout_s: Optional[float] = None, precondition_seed: Optional[int] = None,
        env_padding: int = 0, sample_memory: bool = True) -> dict:
    """One timed run, as `strata-lab run` makes it: the preconditioner (and the
    preset's preconditioning, from profile_path for Adv1 and up, with
    precondition_seed, by default the input seed), then the workload on
    `allocator`. env_padding adds that many bytes to the environment (it
    moves the stack: the evaluation samples memory layout this way).
    sample_memory: sample memory in use from /proc/PID/smaps while it runs
    (the evaluation's timed runs leave it off and measure memory in runs of
    their own). LabError for bad input, before anything runs; a failing
    program is a result with status "crashed", "failed" or "timeout" and no times."""
    workload = _resolve(workload)
    invocation = workload.invocation(mode, scale, seed)
    allocator = _allocator(allocator)
    chosen = precondition.choose(preset or "Adv0", None, None)
    variables = dict(invocation.env, **precondition.shim_variables(
        chosen, seed if precondition_seed is None else precondition_seed, profile_path))
    if env_padding:
        variables["STRATA_LAB_ENV_PADDING"] = "x" * env_padding
    preload = [str(paths.shim("precondition"))] + allocator.preload()
    with tempfile.TemporaryDirectory(prefix="strata-wl-run-") as tmp:
        variables["STRATA_LAB_PRECOND_REPORT"] = f"{tmp}/precondition.%p.json"
        sampler = frag.Sampler(Path(tmp)) if sample_memory else None  # no profiler: memory in use only
        result = runner.run(invocation.argv, preload, variables, sampler=sampler, capture=True,
                            timeout_s=timeout_s, cwd=invocation.cwd)
        report_path = Path(tmp) / f"precondition.{result.pid}.json"
        report = json.loads(report_path.read_text()) if report_path.exists() else None
    checksum = checksum_of(result.stdout or "") if result.ok else None
    status, exit_status = _status(result, checksum, report)
    ok = status == "ok"
    return {
        "workload": workload.name, "mode": mode, "scale": scale, "seed": seed, "allocator": allocator.name,
        "preset": chosen.name, "status": status, "exit_status": exit_status, "checksum": checksum if ok else None,
        "program_seconds": report["program_ns"] / 1e9 if ok else None,
        "precondition_seconds": report["precondition_ns"] / 1e9 if ok else None,
        "wall_seconds": result.wall_ns / 1e9, "cpu_seconds": result.cpu_seconds,
        "peak_rss_bytes": runner.program_peak_rss(result, report),
        "peak_heap_resident_bytes": max((row[1] for row in sampler.rows), default=None) if sampler else None,
        "kept_bytes": report.get("kept_bytes") if report else None,
        "stderr_tail": result.stderr_tail or "",
        "command": invocation.argv,
    }


# ---------------------------------------------------------------------------
# The 2002 paper's Table 3 beside ours (docs/workloads.md).

# Table 3 of "Reconsidering Custom Memory Allocation" (2002): total objects,
# max objects in use, average size, total bytes, max bytes in use.
PAPER_TABLE3 = {
    "175.vpr": (3_897, 3_813, 44, 172_967, 124_636),
    "boxed-sim": (52_203, 4_865, 15, 777_913, 301_987),
    "197.parser": (9_334_022, 230_919, 38, 351_772_626, 3_207_529),
    "lcc": (1_465_416, 92_696, 57, 83_217_416, 3_875_780),
    "176.gcc": (9_065_285, 2_538_005, 54, 487_711_209, 112_753_774),
    "apache": (149_275, 3_749, 208, 30_999_123, 754_492),
    "mudlle": (1_687_079, 38_645, 29, 48_699_895, 662_964),
    "253.perlbmk": (8_888_870, 5_813, 16, 144_514_214, 284_029),
    "164.gzip": (1_307, 72, 6_108, 7_983_304, 6_615_288),
}
# Which paper program each of our workloads stands in for (issue 8).
PAPER_PROGRAM = {"router": "175.vpr", "boxed-sim": "boxed-sim", "parser": "197.parser", "compiler": "lcc",
                 "scopes": "176.gcc", "server": "apache", "interp": "mudlle", "text": "253.perlbmk",
                 "bigbuf": "164.gzip"}


def catalogue(workloads) -> str:
    """Markdown: every workload with its kind, modes, default scale, what it imitates and where the paper has it."""
    lines = ["| workload | kind | modes | default scale | imitates | in the papers |", "|---|---|---|---:|---|---|"]
    for w in workloads:
        lines.append(f"| `{w.name}` | {w.kind} | {', '.join(w.modes)} | {w.default_scale} | {w.imitates} | {w.paper} |")
    return "\n".join(lines) + "\n"


def stats_mode(workload: Workload) -> str:
    return "naive" if "naive" in workload.modes else workload.modes[0]


def stats_table(workloads: list, directory: Path, scale_of=None, progress=None) -> str:
    """Markdown: Table 3's columns for each workload in naive mode at its
    default scale (or scale_of(workload)), the paper's row beneath where it has one."""
    lines = ["| workload | mode, scale | total objects | max objects in use | average size (B) | "
             "total memory (B) | max in use (B) | total/max |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for workload in workloads:
        mode = stats_mode(workload)
        scale = scale_of(workload) if scale_of else workload.default_scale
        if progress:
            progress(workload, mode, scale)
        s = profile(workload, mode, scale, 1, Path(directory) / f"{workload.name}.{mode}.json")
        ratio = f"{s['total_to_peak_bytes']:.1f}" if s["total_to_peak_bytes"] else "-"
        lines.append(f"| {workload.name} | {mode}, {scale} | {s['total_objects']:,} | {s['peak_live_objects']:,} | "
                     f"{s['average_size']:,.0f} | {s['total_bytes']:,} | {s['peak_live_bytes']:,} | {ratio} |")
        paper = PAPER_PROGRAM.get(workload.name)
        if paper:
            objects, peak_objects, size, total, peak = PAPER_TABLE3[paper]
            lines.append(f"| ↳ *paper: {paper}* | | *{objects:,}* | *{peak_objects:,}* | *{size:,}* | *{total:,}* | "
                         f"*{peak:,}* | *{total / peak:.1f}* |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# The command line: `strata-lab workloads` and `strata-lab workload NAME`.

def _scale_arg(text: Optional[str], workload: Workload) -> int:
    if text is None:
        return workload.default_scale
    if not re.fullmatch(r"[0-9]+", text.strip()) or int(text) <= 0:
        raise LabError(f"--scale '{text}': must be a positive integer")
    return int(text)


def list_command(args) -> int:
    known = registry(args.workloads_dir)
    if not args.stats:
        for flag, value in (("--only", args.only), ("--markdown", args.markdown), ("--profiles-dir", args.profiles_dir)):
            if value is not None:
                raise LabError(f"{flag} goes with --stats")
    if args.profiles_dir:
        Path(args.profiles_dir).mkdir(parents=True, exist_ok=True)
    if args.stats:
        chosen = list(known.values())
        if args.only:
            names = [n.strip() for n in args.only.split(",") if n.strip()]
            for name in names:
                if name not in known:
                    raise LabError(f"--only: unknown workload '{name}'; known: {', '.join(known)}")
            chosen = [known[n] for n in names]
        with tempfile.TemporaryDirectory(prefix="strata-wl-stats-") as tmp:
            table = stats_table(chosen, Path(args.profiles_dir or tmp),
                                progress=lambda w, m, s: print(f"strata-lab workloads: profiling {w.name} "
                                                               f"--mode {m} --scale {s}", file=sys.stderr))
        if args.markdown:
            Path(args.markdown).write_text(table)
        print(table, end="")
        return 0
    if args.format == "markdown":
        print(catalogue(known.values()), end="")
        return 0
    width = max((len(n) for n in known), default=8)
    for workload in known.values():
        print(f"{workload.name:<{width}}  {workload.kind:<7}  {','.join(workload.modes):<17}  "
              f"scale {workload.default_scale:<4}  {workload.imitates}")
    return 0


def run_command(args) -> int:
    workload = lookup(args.name, args.workloads_dir)
    scale = _scale_arg(args.scale, workload)
    if args.seed < 0:
        raise LabError(f"--seed {args.seed}: must be a non-negative integer")
    if args.timeout is not None and args.timeout <= 0:
        raise LabError(f"--timeout {args.timeout}: must be > 0 seconds")
    workload.invocation(args.mode, scale, args.seed)  # bad mode/scale/missing binary: before anything runs
    chosen = precondition.choose(args.preset, None, None)
    profile_path = args.profile
    with tempfile.TemporaryDirectory(prefix="strata-wl-") as tmp:
        if chosen.multiplier > 0 and profile_path is None:
            profile_path = Path(tmp) / "profile.json"
            print(f"strata-lab workload: profiling {workload.name} --mode {args.mode} --scale {scale} first "
                  f"(preset {chosen.name} preconditions from a profile)", file=sys.stderr)
            profile(workload, args.mode, scale, args.seed, profile_path, timeout_s=args.timeout)
        result = run(workload, args.mode, scale, args.seed, args.allocator, chosen.name, profile_path,
                     args.timeout)
    result["versions"] = workload.versions()
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    where = (f"strata-lab workload: {workload.name} --mode {args.mode} --scale {scale} --seed {args.seed} "
             f"on {result['allocator']} {result['preset']}")
    if result["status"] != "ok":
        print(f"{where}: {result['status']} ({result['exit_status']})", file=sys.stderr)
        if result["stderr_tail"].strip():
            print(result["stderr_tail"].rstrip()[-2000:], file=sys.stderr)
        return 1
    heap = result["peak_heap_resident_bytes"]
    print(f"{where}: program {result['program_seconds']:.3f} s, peak RSS {result['peak_rss_bytes'] / 2**20:.1f} MiB, "
          f"peak heap in use {'no sample' if heap is None else f'{heap / 2**20:.1f} MiB'}")
    print(f"checksum {result['checksum']}")
    return 0
