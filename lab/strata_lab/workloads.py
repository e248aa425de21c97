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
import hashlib
import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from . import allocators, frag, paths, precondition, profiling as profiler, runner
from .errors import LabError, ProgramFailed
from .program_runners import PROGRAMS, WORKLOADS_DIR, Invocation, field as _field

MODES = ("custom", "naive", "reap")
KINDS = ("native", "program")
STATUSES = ("ok", "crashed", "timeout", "failed")


def checksum_of(stdout: str) -> Optional[str]:
    """The hex digits of a last line "checksum <hex>", else None."""
    lines = stdout.rstrip().splitlines()
    match = re.fullmatch(r"checksum ([0-9a-f]+)", lines[-1].strip()) if lines else None
    return match.group(1) if match else None


def checksum_for(invocation: Invocation, stdout: str) -> Optional[str]:
    """The run's checksum: its last line's, a hash of all it printed, or none to check (Invocation.checksum)."""
    if invocation.checksum == "none":
        return "0" * 16
    if invocation.checksum == "stdout":
        return hashlib.sha256(stdout.encode()).hexdigest()[:16]
    return checksum_of(stdout)


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
        return PROGRAMS[self.program["runner"]].invocation(self, mode, scale, seed)

    def versions(self) -> dict:
        """The exact versions of the real program behind it ({} for native ones)."""
        if self.kind == "native":
            return {}
        return PROGRAMS[self.program["runner"]].versions(self)


# ---------------------------------------------------------------------------
# The registry: every workloads/*/workload.json.

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
        if runner_name not in PROGRAMS:
            raise LabError(f"{where}: field 'program.runner' is '{runner_name}'; expected one of "
                           f"{', '.join(PROGRAMS)}")
        PROGRAMS[runner_name].validate(program, where)
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
                 "checksum": checksum_for(invocation, result.stdout or ""), "versions": workload.versions()})
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
    checksum = checksum_for(invocation, result.stdout or "") if result.ok else None
    status, exit_status = _status(result, checksum, report)
    ok = status == "ok"
    return {
        "workload": workload.name, "mode": mode, "scale": scale, "seed": seed, "allocator": allocator.name,
        "preset": chosen.name, "status": status, "exit_status": exit_status, "checksum": checksum if ok else None,
        "program_seconds": report["program_ns"] / 1e9 if ok else None,
        "program_cpu_seconds": report["program_cpu_ns"] / 1e9 if ok else None,
        "precondition_seconds": report["precondition_ns"] / 1e9 if ok else None,
        "wall_seconds": result.wall_ns / 1e9, "cpu_seconds": result.cpu_seconds,
        "peak_rss_bytes": runner.program_peak_rss(result, report),
        "peak_heap_resident_bytes": max((row[1] for row in sampler.rows), default=None) if sampler else None,
        "kept_bytes": report.get("kept_bytes") if report else None,
        "stderr_tail": result.stderr_tail or "",
        "command": invocation.argv,
    }

