"""`strata-lab evaluate`: runs a config's matrix (evalconfig.py) and writes a
results folder; `strata-lab report DIR` re-renders its report (report.py).

The order of work:
  1. the config is checked, every allocator resolved (a missing one is skipped,
     with the command that installs it) and every workload invocation built,
     before anything runs;
  2. each (workload, mode, scale) is profiled once under glibc: its peak live
     bytes are the fragmentation ratio's denominator, and the profile feeds
     Adv1+ preconditioning (a profile counts requests, which do not depend on
     the allocator);
  3. rounds: each round runs every cell once, in a shuffled order, so runs of
     different cells interleave and ratios pair runs of the same round;
  4. the benchmark programs of [bench.*], interleaved the same way;
  5. with --cachegrind, one cachegrind and one callgrind run per cell;
  6. the report.

Everything is appended to the CSV files as it is measured, so Ctrl-C keeps
what was gathered and the report says it is partial."""
import csv
import datetime
import fcntl
import importlib.util
import json
import os
import platform
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import allocators, evalconfig, paths, precondition, runner, workloads
from .drag import measure as drag_measure, tool_dir as drag_tool_dir
from .errors import LabError, ProgramFailed

DEFAULT_CONFIG = paths.REPO_ROOT / "lab" / "configs" / "default.toml"
RESULTS_ROOT = paths.REPO_ROOT / "results"

RUN_FIELDS = ["round", "order", "workload", "kind", "mode", "scale", "seed", "allocator", "preset", "status",
              "exit_status", "checksum", "program_seconds", "precondition_seconds", "wall_seconds",
              "peak_rss_bytes", "parent_rss_bytes", "peak_heap_resident_bytes", "kept_bytes", "profile_peak_live_bytes",
              "fragmentation", "started", "stderr_tail"]
PROFILE_FIELDS = ["workload", "mode", "scale", "seed", "status", "error", "path", "checksum", "total_objects",
                  "total_bytes", "average_size", "peak_live_objects", "peak_live_bytes", "total_to_peak_bytes",
                  "realloc_calls", "free_calls", "seconds"]
VALGRIND_FIELDS = ["workload", "mode", "scale", "seed", "allocator", "preset", "tool", "status", "instructions",
                   "d1_misses", "ll_misses", "data_refs", "seconds", "error"]
BENCH_FIELDS = ["bench", "round", "contender", "allocator", "status", "seconds", "instructions",
                "peak_held_bytes", "peak_rss_added", "peak_live_bytes", "allocated_bytes", "frees", "checksum",
                "error", "scale", "total_drag", "peak_in_use_bytes", "peak_ideal_bytes"]

# How to get an allocator that is not there (the report lists it as skipped).
INSTALL = {
    "jemalloc": "apt-get install libjemalloc2",
    "tcmalloc": "apt-get install libgoogle-perftools4 (libtcmalloc_minimal.so.4)",
    "mimalloc": "apt-get install libmimalloc2.0",
    "strata": "make build (builds src/malloc/libstrata.so)",
    "kingsley": "make build (builds src/layered/libstrata-kingsley.so)",
    "lea": "make build (builds src/layered/libstrata-lea.so)",
}


@dataclass(frozen=True)
class Cell:
    workload: str
    mode: str
    scale: int
    allocator: str
    preset: str

    @property
    def profile_key(self):
        return (self.workload, self.mode, self.scale)

    def label(self) -> str:
        return f"{self.workload} {self.mode} x{self.scale} {self.allocator} {self.preset}"


@dataclass
class Plan:
    config: evalconfig.Config
    cells: dict          # Cell -> runs wanted
    profiles: list       # (workload, mode, scale)
    available: dict      # allocator name -> library path or "" (glibc)
    skipped: dict        # allocator name -> reason and install command
    not_applicable: list  # "workload: mode" pairs dropped because the workload lacks the mode
    experiments: list    # per experiment: its cells (for the report)
    valgrind_cells: list = None  # --cachegrind: the cells of config.cachegrind_sections (all by default)


def plan(config: evalconfig.Config, registry: dict, needs_valgrind: bool = False) -> Plan:
    """Everything that can be checked before anything runs."""
    wanted_allocators = []
    for experiment in config.experiments:
        wanted_allocators += [a for a in experiment.allocators if a not in wanted_allocators]
    available, skipped = {}, {}
    for name in wanted_allocators:
        try:
            resolved = allocators.resolve(name)
            available[name] = str(resolved.library or "")
        except LabError as error:
            skipped[name] = f"{error}; install: {INSTALL.get(name, 'see docs/lab.md')}"
    if "glibc" not in available:
        available["glibc"] = ""  # profiles run on glibc
    cells, profiles, not_applicable, experiments, valgrind_cells = {}, [], [], [], []
    wanted_sections = config.cachegrind_sections
    for experiment in config.experiments:
        mine = []
        for name in experiment.workloads:
            workload = registry[name]
            scale = experiment.scale_of(name, workload.default_scale)
            for mode in experiment.modes:
                if mode not in workload.modes:
                    note = f"{name}: {mode}"
                    if note not in not_applicable:
                        not_applicable.append(note)
                    continue
                workload.invocation(mode, scale, config.seed)  # missing binary, bad scale: before anything runs
                if (name, mode, scale) not in profiles:
                    profiles.append((name, mode, scale))
                if experiment.section == "statistics":
                    continue  # profiles only
                for allocator in experiment.allocators:
                    if allocator not in available:
                        continue
                    for preset in experiment.presets:
                        cell = Cell(name, mode, scale, allocator, preset)
                        cells[cell] = max(cells.get(cell, 0), experiment.runs)
                        mine.append(cell)
                        if (wanted_sections is None or experiment.section in wanted_sections) \
                                and cell not in valgrind_cells:
                            valgrind_cells.append(cell)
        experiments.append({"section": experiment.section, "title": experiment.title,
                            "workloads": experiment.workloads, "allocators": experiment.allocators,
                            "modes": experiment.modes, "presets": experiment.presets,
                            "scales": {n: experiment.scale_of(n, registry[n].default_scale)
                                       for n in experiment.workloads},
                            "runs": experiment.runs, "cells": len(mine)})
    if needs_valgrind and not _which("valgrind"):
        raise LabError("--cachegrind needs valgrind (apt-get install valgrind)")
    return Plan(config, cells, profiles, available, skipped, not_applicable, experiments, valgrind_cells)


def _which(program: str) -> Optional[str]:
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(directory) / program
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


# ---------------------------------------------------------------------------
# The results folder, its lock, the CSV files.

def results_folder(output: Optional[str]) -> Path:
    if output:
        return Path(output)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = RESULTS_ROOT / stamp
    suffix = 1
    while folder.exists():
        suffix += 1
        folder = RESULTS_ROOT / f"{stamp}-{suffix}"
    return folder


def point_latest(folder: Path) -> None:
    """results/latest -> the newest folder (only for folders under results/)."""
    if folder.resolve().parent != RESULTS_ROOT.resolve():
        return
    link = RESULTS_ROOT / "latest"
    temporary = RESULTS_ROOT / f".latest.{os.getpid()}"
    if temporary.is_symlink():
        temporary.unlink()
    temporary.symlink_to(folder.name)
    os.replace(temporary, link)


class FolderLock:
    """One evaluation per folder: an flock on <folder>/.evaluate.lock."""

    def __init__(self, folder: Path):
        self.path = folder / ".evaluate.lock"
        self.file = None

    def __enter__(self):
        self.file = open(self.path, "a+")
        try:
            fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.file.close()
            raise LabError(f"{self.path.parent}: another evaluation is writing into this folder "
                           f"(it holds {self.path}); refusing to run a second one there") from None
        self.file.seek(0)
        self.file.truncate()
        self.file.write(f"{os.getpid()}\n")
        self.file.flush()
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.file, fcntl.LOCK_UN)
        self.file.close()


class CsvLog:
    """Appends rows as they come (flushed: an interrupted run keeps them)."""

    def __init__(self, path: Path, fields: list):
        self.fields = fields
        self.file = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=fields, extrasaction="ignore")
        self.writer.writeheader()
        self.file.flush()

    def write(self, row: dict) -> None:
        self.writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in self.fields})
        self.file.flush()

    def close(self) -> None:
        self.file.close()


# ---------------------------------------------------------------------------
# Progress on stderr: the running cell, done/total, the time left.

class Progress:
    def __init__(self, total: int, stream=sys.stderr):
        self.total = total
        self.done = 0
        self.stream = stream
        self.tty = stream.isatty()
        self.start = time.monotonic()
        self.durations = {}   # key -> list of seconds
        self.remaining = {}   # key -> steps still to do
        self.last_line = 0.0

    def expect(self, key, steps: int) -> None:
        self.remaining[key] = self.remaining.get(key, 0) + steps

    def eta(self) -> Optional[float]:
        all_durations = [d for ds in self.durations.values() for d in ds]
        if not all_durations:
            return None
        overall = sum(all_durations) / len(all_durations)
        left = 0.0
        for key, steps in self.remaining.items():
            mine = self.durations.get(key)
            left += steps * (sum(mine) / len(mine) if mine else overall)
        return left

    def show(self, what: str) -> None:
        eta = self.eta()
        eta_text = "ETA --:--" if eta is None else f"ETA {int(eta // 60):d}:{int(eta % 60):02d}"
        width = 24
        filled = int(width * self.done / max(1, self.total))
        line = f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {eta_text}  {what}"
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r" + line[:150].ljust(150))
            self.stream.flush()
        elif now - self.last_line > 10 or self.done == 0 or self.done == self.total:
            self.stream.write(line + "\n")
            self.stream.flush()
            self.last_line = now

    def finished(self, key, seconds: float) -> None:
        self.done += 1
        self.durations.setdefault(key, []).append(seconds)
        if key in self.remaining:
            self.remaining[key] = max(0, self.remaining[key] - 1)

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


class Interrupt:
    """SIGINT sets a flag: the run in progress is finished (or dropped, if the
    child died of the same Ctrl-C) and the evaluation stops with a partial report."""

    def __init__(self):
        self.requested = False
        self.previous = None

    def __enter__(self):
        self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.requested:  # a second Ctrl-C: stop at once
            raise KeyboardInterrupt
        self.requested = True
        sys.stderr.write("\nstrata-lab evaluate: interrupted; finishing the current run, then writing a "
                         "partial report (Ctrl-C again to stop at once)\n")

    def __exit__(self, *exc):
        signal.signal(signal.SIGINT, self.previous)


# ---------------------------------------------------------------------------
# Machine, versions, meta.json.

def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine() -> dict:
    cpu = re.search(r"^model name\s*:\s*(.+)$", _read("/proc/cpuinfo"), re.M)
    memory = re.search(r"^MemTotal:\s*(\d+) kB", _read("/proc/meminfo"), re.M)
    return {"hostname": platform.node(), "cpu": cpu.group(1).strip() if cpu else platform.processor(),
            "cores": os.cpu_count(), "memory_bytes": int(memory.group(1)) * 1024 if memory else None,
            "kernel": platform.release(), "system": platform.platform(),
            "load_average_at_start": list(os.getloadavg()), "python": platform.python_version()}


def git_commit() -> dict:
    def git(*args):
        try:
            return subprocess.run(["git", "-C", str(paths.REPO_ROOT), *args], capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
    return {"commit": git("rev-parse", "HEAD"), "describe": git("describe", "--always", "--dirty"),
            "branch": git("rev-parse", "--abbrev-ref", "HEAD")}


def allocator_versions(available: dict) -> dict:
    """Library path, its real file and (for Debian's) the package version."""
    out = {}
    for name, library in available.items():
        if not library:
            out[name] = {"library": None, "version": platform.libc_ver()[1] and
                         f"glibc {platform.libc_ver()[1]}"}
            continue
        real = os.path.realpath(library)
        package = ""
        try:
            owner = subprocess.run(["dpkg", "-S", real], capture_output=True, text=True, timeout=10).stdout
            if owner:
                pkg = owner.split(":")[0]
                package = pkg + " " + subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                                                     capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            pass
        out[name] = {"library": library, "real_path": real, "version": package or "built here"}
    return out


def write_json(path: Path, data) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=2, default=str) + "\n")
    os.replace(temporary, path)


# ---------------------------------------------------------------------------
# Valgrind (--cachegrind): one cachegrind and one callgrind run per cell.

def _valgrind_totals(out_file: Path) -> dict:
    events, totals = None, None
    for line in out_file.read_text().splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:") or line.startswith("totals:"):
            totals = [int(x) for x in line.split()[1:]]
    if not events or not totals:
        raise LabError(f"{out_file}: no events/summary line")
    return dict(zip(events, totals))


def valgrind_run(tool: str, cell: Cell, workload, seed: int, profile_path: Optional[str], folder: Path,
                 timeout_s: float) -> dict:
    row = {"workload": cell.workload, "mode": cell.mode, "scale": cell.scale, "seed": seed,
           "allocator": cell.allocator, "preset": cell.preset, "tool": tool}
    invocation = workload.invocation(cell.mode, cell.scale, seed)
    chosen = precondition.choose(cell.preset, None, None)
    variables = dict(invocation.env, **precondition.shim_variables(chosen, seed, profile_path))
    variables["STRATA_REAP_CHECK"] = "0"  # under Valgrind the reap would switch to its checked mode
    preload = [str(paths.shim("precondition"))] + allocators.resolve(cell.allocator).preload()
    out_dir = folder / "valgrind"
    out_dir.mkdir(exist_ok=True)
    out_file = out_dir / (re.sub(r"[^A-Za-z0-9_.-]", "_", f"{tool}.{cell.label()}") + ".out")
    options = ["--cache-sim=yes"] if tool == "cachegrind" else []
    argv = ["valgrind", f"--tool={tool}", f"--{tool}-out-file={out_file}", *options, *invocation.argv]
    start = time.monotonic()
    try:
        done = subprocess.run(argv, env=runner.environment(preload, variables), capture_output=True, text=True,
                              timeout=timeout_s, cwd=invocation.cwd)
    except subprocess.TimeoutExpired:
        return dict(row, status="timeout", seconds=time.monotonic() - start)
    row["seconds"] = time.monotonic() - start
    if done.returncode != 0:
        return dict(row, status="failed" if done.returncode > 0 else "crashed",
                    error=done.stderr.strip()[-300:])
    totals = _valgrind_totals(out_file)
    row.update(status="ok", instructions=totals.get("Ir"))
    if tool == "cachegrind":
        row.update(d1_misses=totals.get("D1mr", 0) + totals.get("D1mw", 0),
                   ll_misses=totals.get("DLmr", 0) + totals.get("DLmw", 0),
                   data_refs=totals.get("Dr", 0) + totals.get("Dw", 0))
    return row


# ---------------------------------------------------------------------------
# The benchmark programs of [bench.*].

def _bench_program(relative: str) -> Path:
    path = paths.build_dir() / relative
    if not path.is_file():
        raise LabError(f"{path} is missing: build it (`make build`)")
    return path


def bench_steps(config: evalconfig.Config, cachegrind: bool, available: dict) -> list:
    """(bench, round, contender, allocator) steps, each round in a shuffled order."""
    rng = random.Random(config.seed)
    steps = []
    zero = config.bench.get("zero-cost")
    if zero is not None:
        _bench_program("bench/layers/bench_zero_cost")
        contenders = ["kingsley-layers", "kingsley-monolithic", "lea-layers", "glibc", "bump"]
        for r in range(1, zero.get("rounds", evalconfig.MIN_RUNS) + 1):
            order = contenders[:]
            rng.shuffle(order)
            steps += [("zero-cost", r, c, "") for c in order]
        if cachegrind or "callgrind_ops" in zero:  # instructions: the deterministic zero-cost figure
            if not _which("valgrind"):
                raise LabError("bench.zero-cost.callgrind_ops needs valgrind (apt-get install valgrind)")
            steps += [("zero-cost-callgrind", 0, c, "") for c in contenders]
    drag = config.bench.get("drag")
    if drag is not None:
        for contender in ("reap", "emulator"):
            _bench_program(f"bench/reap/strata-bench-reap-{contender}")
        variants = [("reap", ""), ("reap", "no-free"), ("emulator", ""), ("emulator", "no-free")]
        for r in range(1, drag.get("runs", 3) + 1):
            order = variants[:]
            rng.shuffle(order)
            steps += [("drag", r, c, v) for c, v in order]
    object_drag = config.bench.get("object-drag")
    if object_drag is not None:  # deterministic figures: one run each
        drag_tool_dir()  # built? (an error names what is missing, before anything runs)
        for name in object_drag["workloads"]:
            w = workloads.lookup(name)
            if w.kind != "native":
                raise LabError(f"bench.object-drag.workloads: {name}: only native workloads run under strata-drag")
            for mode in object_drag.get("modes", evalconfig.MODES):
                if mode in w.modes:
                    w.invocation(mode, 1)  # the binary is built
                    steps.append(("object-drag", 1, name, mode))
    return steps


def run_bench_step(step, config: evalconfig.Config, available: dict, timeout_s: float,
                   folder: Optional[Path] = None) -> dict:
    bench, rnd, contender, extra = step
    row = {"bench": bench, "round": rnd, "contender": contender, "allocator": extra}
    if bench == "object-drag":  # contender = the workload, extra = its mode
        return _object_drag_step(row, config, timeout_s, folder)
    env = dict(os.environ, STRATA_REAP_CHECK="0")
    try:
        if bench in ("zero-cost", "zero-cost-callgrind"):
            exe = str(_bench_program("bench/layers/bench_zero_cost"))
            if bench == "zero-cost":
                ops = config.bench["zero-cost"].get("ops", 2_000_000)
                out = subprocess.run([exe, contender, str(ops)], capture_output=True, text=True, check=True,
                                     timeout=timeout_s).stdout
                fields = dict(kv.split("=", 1) for kv in out.split())
                row.update(status="ok", seconds=float(fields["seconds"]))
            else:
                ops = config.bench["zero-cost"].get("callgrind_ops", 200_000)
                done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", exe,
                                       contender, str(ops)], capture_output=True, text=True, check=True,
                                      timeout=timeout_s * 50)
                found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
                row.update(status="ok" if found else "failed", instructions=int(found.group(1)) if found else None)
        elif bench == "drag":
            exe = str(_bench_program(f"bench/reap/strata-bench-reap-{contender}"))
            drag = config.bench["drag"]
            argv = [exe, "drag", "--phases", str(drag.get("phases", 40)), "--objects", str(drag.get("objects", 50000))]
            if extra == "no-free":
                argv.append("--no-free")
            out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=timeout_s, env=env).stdout
            data = [json.loads(line) for line in out.splitlines() if line.startswith("{")][0]
            row.update(status="ok", peak_held_bytes=data.get("peak_held_bytes"),
                       peak_rss_added=data.get("peak_rss_added"), peak_live_bytes=data.get("peak_live_bytes"),
                       allocated_bytes=data.get("allocated_bytes"), frees=data.get("free"))
    except subprocess.CalledProcessError as error:
        row.update(status="failed" if error.returncode > 0 else "crashed", error=(error.stderr or "")[-300:])
    except subprocess.TimeoutExpired:
        row.update(status="timeout")
    except (LabError, ValueError, KeyError, IndexError) as error:
        row.update(status="failed", error=str(error)[:300])
    return row


def _object_drag_step(row: dict, config: evalconfig.Config, timeout_s: float, folder: Optional[Path]) -> dict:
    """One workload in one mode under strata-drag; its files go to folder/drag/<workload>-<mode>."""
    w = workloads.lookup(row["contender"])
    scale = max(1, round(w.default_scale * config.bench["object-drag"].get("scale", 0.1)))
    row["scale"] = scale
    out = folder / "drag" / f"{w.name}-{row['allocator']}" if folder is not None else None
    start = time.monotonic()
    try:
        figures = drag_measure(w.invocation(row["allocator"], scale, config.seed).argv, out_dir=out, quiet=True,
                               timeout_s=timeout_s * 100, plot=out is not None)
        row.update(status="crashed" if figures["partial"] else "ok", total_drag=figures["total_drag"],
                   peak_in_use_bytes=figures["peak_in_use_bytes"], peak_ideal_bytes=figures["peak_ideal_bytes"],
                   allocated_bytes=figures["allocation_time_bytes"])
    except (LabError, ProgramFailed) as error:
        row.update(status="failed", error=str(error)[:300])
    row["seconds"] = time.monotonic() - start
    return row


# ---------------------------------------------------------------------------
# The evaluation.

def _own_rss() -> Optional[int]:
    """This process's resident memory. Linux counts it in a child's ru_maxrss
    (the child starts as our copy and the high-water mark survives exec), so it
    is recorded beside each run's peak RSS: a program smaller than this shows
    this figure as its peak RSS. peak_heap_resident_bytes (smaps) has no such floor."""
    match = re.search(r"^VmRSS:\s*(\d+) kB", _read("/proc/self/status"), re.M)
    return int(match.group(1)) * 1024 if match else None


def _fragmentation(result: dict, peak_live: Optional[int]) -> Optional[float]:
    heap = result.get("peak_heap_resident_bytes")
    if heap is None or not peak_live:
        return None
    return heap / (peak_live + (result.get("kept_bytes") or 0))


def evaluate(config: evalconfig.Config, registry: dict, folder: Path, cachegrind: bool = False,
             stream=sys.stderr) -> dict:
    """Runs the plan into folder; returns meta (with "partial")."""
    the_plan = plan(config, registry, needs_valgrind=cachegrind)
    steps = bench_steps(config, cachegrind, the_plan.available)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "profiles").mkdir(exist_ok=True)
    with FolderLock(folder), Interrupt() as interrupt:
        started = time.time()
        meta = {
            "format": "strata-evaluation", "version": 1, "partial": True, "interrupted": False,
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "config": {"path": str(config.path), "name": config.name, "description": config.description,
                       "runs": config.runs, "seed": config.seed, "timeout_s": config.timeout_s,
                       "toml": config.raw},
            "cachegrind": cachegrind, "cachegrind_cells": len(the_plan.valgrind_cells) if cachegrind else 0,
            "machine": machine(), "git": git_commit(),
            "allocators": allocator_versions(the_plan.available), "skipped_allocators": the_plan.skipped,
            "not_applicable": the_plan.not_applicable, "experiments": the_plan.experiments,
            "workloads": {}, "planned": {"cells": len(the_plan.cells), "runs": sum(the_plan.cells.values()),
                                        "profiles": len(the_plan.profiles), "bench_steps": len(steps)},
        }
        names = sorted({c.workload for c in the_plan.cells} | {p[0] for p in the_plan.profiles})
        for name in names:
            w = registry[name]
            try:
                versions = w.versions()
            except LabError as error:
                versions = {"error": str(error)}
            meta["workloads"][name] = {"kind": w.kind, "imitates": w.imitates, "paper": w.paper,
                                       "modes": list(w.modes), "default_scale": w.default_scale,
                                       "test": w.test, "versions": versions}
        write_json(folder / "meta.json", meta)

        runs_total = sum(the_plan.cells.values())
        valgrind_total = 2 * len(the_plan.valgrind_cells) if cachegrind else 0
        progress = Progress(len(the_plan.profiles) + runs_total + len(steps) + valgrind_total, stream)
        for key in the_plan.profiles:
            progress.expect(("profile",) + key, 1)
        for cell, n in the_plan.cells.items():
            progress.expect(cell, n)
        for step in steps:
            progress.expect(("bench", step[0], step[2]), 1)
        if cachegrind:
            for cell in the_plan.valgrind_cells:
                progress.expect(("valgrind", cell), 2)

        profile_log = CsvLog(folder / "profiles.csv", PROFILE_FIELDS)
        run_log = CsvLog(folder / "runs.csv", RUN_FIELDS)
        bench_log = CsvLog(folder / "bench.csv", BENCH_FIELDS)
        valgrind_log = CsvLog(folder / "valgrind.csv", VALGRIND_FIELDS) if cachegrind else None
        profiles = {}
        order = bench_done = 0
        try:
            # Profiles, once per (workload, mode, scale).
            for key in the_plan.profiles:
                if interrupt.requested:
                    break
                name, mode, scale = key
                progress.show(f"profiling {name} {mode} x{scale}")
                out = folder / "profiles" / f"{name}.{mode}.{scale}.json"
                start = time.monotonic()
                row = {"workload": name, "mode": mode, "scale": scale, "seed": config.seed}
                try:
                    summary = workloads.profile(registry[name], mode, scale, config.seed, out,
                                                timeout_s=config.timeout_s * 4)
                    row.update(summary, status="ok", path=str(out.relative_to(folder)))
                    profiles[key] = row
                except (ProgramFailed, LabError) as error:
                    row.update(status="failed", error=str(error)[:500])
                row["seconds"] = time.monotonic() - start
                if not interrupt.requested or row["status"] == "ok":
                    profile_log.write(row)
                progress.finished(("profile",) + key, row["seconds"])

            # Timed runs: rounds of shuffled cells.
            rng = random.Random(config.seed)
            rounds = max(the_plan.cells.values(), default=0)
            order = 0
            for rnd in range(1, rounds + 1):
                if interrupt.requested:
                    break
                cells = [c for c, n in the_plan.cells.items() if n >= rnd]
                rng.shuffle(cells)
                for cell in cells:
                    if interrupt.requested:
                        break
                    progress.show(f"round {rnd}/{rounds}: {cell.label()}")
                    prof = profiles.get(cell.profile_key)
                    parent_rss = _own_rss()
                    start = time.monotonic()
                    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
                    if cell.preset != "Adv0" and prof is None:
                        result = {"status": "failed", "exit_status": "not run: the workload's profile failed, "
                                  "and this preset preconditions from it"}
                    else:
                        result = workloads.run(registry[cell.workload], cell.mode, cell.scale, config.seed,
                                               cell.allocator, cell.preset,
                                               str(folder / prof["path"]) if prof else None, config.timeout_s)
                    seconds = time.monotonic() - start
                    if interrupt.requested and result["status"] != "ok":
                        break  # the child most likely died of the same Ctrl-C: not a result
                    order += 1
                    peak_live = prof["peak_live_bytes"] if prof else None
                    row = dict(result, round=rnd, order=order, workload=cell.workload,
                               kind=registry[cell.workload].kind, mode=cell.mode, scale=cell.scale,
                               seed=config.seed, allocator=cell.allocator, preset=cell.preset,
                               profile_peak_live_bytes=peak_live, fragmentation=_fragmentation(result, peak_live),
                               started=stamp, parent_rss_bytes=parent_rss,
                               stderr_tail=(result.get("stderr_tail") or "").strip()[-300:].replace("\n", " | "))
                    run_log.write(row)
                    progress.finished(cell, seconds)

            # Benchmark programs.
            bench_done = 0
            for step in steps:
                if interrupt.requested:
                    break
                progress.show(f"bench {step[0]} round {step[1]}: {step[2]} {step[3]}".strip())
                start = time.monotonic()
                row = run_bench_step(step, config, the_plan.available, config.timeout_s, folder)
                if interrupt.requested and row["status"] != "ok":
                    break
                bench_log.write(row)
                bench_done += 1
                progress.finished(("bench", step[0], step[2]), time.monotonic() - start)

            # Cache misses and instructions.
            if cachegrind:
                for cell in the_plan.valgrind_cells:
                    for tool in ("cachegrind", "callgrind"):
                        if interrupt.requested:
                            break
                        progress.show(f"{tool}: {cell.label()}")
                        prof = profiles.get(cell.profile_key)
                        start = time.monotonic()
                        row = valgrind_run(tool, cell, registry[cell.workload], config.seed,
                                           str(folder / prof["path"]) if prof else None, folder,
                                           config.timeout_s * 100)
                        if interrupt.requested and row["status"] != "ok":
                            break
                        valgrind_log.write(row)
                        progress.finished(("valgrind", cell), time.monotonic() - start)
        except KeyboardInterrupt:
            interrupt.requested = True
        finally:
            progress.close()
            for log in (profile_log, run_log, bench_log, valgrind_log):
                if log is not None:
                    log.close()
        meta["partial"] = interrupt.requested
        meta["interrupted"] = interrupt.requested
        meta["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        meta["duration_seconds"] = round(time.time() - started, 1)
        meta["completed"] = {"runs": order, "profiles": len(profiles), "bench_steps": bench_done}
        write_json(folder / "meta.json", meta)
    return meta


def command(args) -> int:
    # The report needs matplotlib: check now, import at the end. Importing it
    # here would add ~45 MiB to this process, which every run's ru_maxrss counts.
    if importlib.util.find_spec("matplotlib") is None:
        raise LabError("the report needs matplotlib: run `make setup` (it is in lab/pyproject.toml)")
    registry = workloads.registry()
    config = evalconfig.load(args.config or DEFAULT_CONFIG, list(registry))
    folder = results_folder(args.output)
    if folder.exists() and not folder.is_dir():
        raise LabError(f"-o {folder}: exists and is not a folder")
    print(f"strata-lab evaluate: {config.path} -> {folder}", file=sys.stderr)
    meta = evaluate(config, registry, folder, cachegrind=args.cachegrind)
    point_latest(folder)
    from . import report
    written = report.render(folder)
    state = "PARTIAL (interrupted) " if meta["partial"] else ""
    print(f"strata-lab evaluate: {state}report: {written['html']} (and {written['md'].name}); "
          f"{meta['completed']['runs']} runs in {meta['duration_seconds']:.0f} s")
    return 130 if meta["interrupted"] else 0


def report_command(args) -> int:
    from . import report
    folder = Path(args.results_dir)
    if not (folder / "meta.json").is_file():
        raise LabError(f"{folder}: not an evaluation results folder (no meta.json)")
    written = report.render(folder)
    print(f"strata-lab report: {written['html']} (and {written['md'].name})")
    return 0
