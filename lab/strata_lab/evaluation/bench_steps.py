"""The benchmark programs of [bench.*]: zero-cost (bench/layers), the
reap's drag workload (bench/reap), object drag under strata-drag, page
locality under strata-pages and the stand-ins' time in memory operations
under callgrind, as steps interleaved in shuffled rounds like the workloads'
cells."""
import json
import os
import random
import shutil
import subprocess
import time
from pathlib import Path
from typing import Optional

from .. import allocators, calibration, pages, paths, valgrind, workloads
from . import configuration
from ..bench import layers as layers_bench
from ..drag import measure as drag_measure, tool_dir as drag_tool_dir
from ..errors import LabError, ProgramFailed


LAYERS_PROGRAMS = {p.workload: p for p in layers_bench.PROGRAMS}


def _bench_program(relative: str) -> Path:
    path = paths.build_dir() / relative
    if not path.is_file():
        raise LabError(f"{path} is missing: build it (`make build`)")
    return path


def bench_steps(config: configuration.Config, cachegrind: bool, available: dict) -> list:
    """(bench, round, contender, allocator) steps, each round in a shuffled order."""
    rng = random.Random(config.seed)
    steps = []
    for program in layers_bench.PROGRAMS:  # zero-cost (§6) and special (§5): bench/layers
        steps += _layers_steps(program, config.bench.get(program.workload), cachegrind, rng)
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
            for mode in object_drag.get("modes", configuration.MODES):
                if mode in w.modes:
                    w.invocation(mode, 1)  # the binary is built
                    steps.append(("object-drag", 1, name, mode))
    if config.bench.get("pages") is not None:
        steps += _pages_steps(config.bench["pages"])
    memory_operations = config.bench.get("memory-operations")
    if memory_operations is not None:  # deterministic: one run each
        valgrind.require("bench.memory-operations")
        for name in memory_operations["workloads"]:
            workloads.lookup(name).invocation("naive", 1)  # the binary is built, naive mode exists
            steps.append(("memory-operations", 1, name, "glibc"))
    return steps


def _pages_steps(table: dict) -> list:
    """One run per (workload, allocator) under strata-pages: deterministic figures."""
    drag_tool_dir(pages.TOOL)  # built? (an error names what is missing, before anything runs)
    steps = []
    for name in table["workloads"]:
        w = workloads.lookup(name)
        if w.kind != "native":
            raise LabError(f"bench.pages.workloads: {name}: only native workloads run under strata-pages")
        w.invocation(table.get("mode", "naive"), 1)  # the binary is built, the mode exists
        steps += [("pages", 1, name, allocator) for allocator in table["allocators"]]
    return steps


def _layers_steps(program, table: Optional[dict], cachegrind: bool, rng: random.Random) -> list:
    """[bench.zero-cost] or [bench.special]: each contender once a round, shuffled; then callgrind."""
    if table is None:
        return []
    _bench_program(program.path)
    steps = []
    for r in range(1, table.get("rounds", configuration.MIN_RUNS) + 1):
        order = list(program.contenders)
        rng.shuffle(order)
        steps += [(program.workload, r, c, "") for c in order]
    if cachegrind or "callgrind_ops" in table:  # instructions: the deterministic figure
        if not shutil.which("valgrind"):
            raise LabError(f"bench.{program.workload}.callgrind_ops needs valgrind (apt-get install valgrind)")
        steps += [(f"{program.workload}-callgrind", 0, c, "") for c in program.contenders]
    return steps


def deterministic(step) -> bool:
    """A step whose figures the machine's load cannot move: counts made under valgrind (callgrind's
    instructions, strata-drag's object drag, strata-pages' page references)."""
    return step[0] in ("object-drag", "pages", "memory-operations") or step[0].endswith("-callgrind")


def run_bench_step(step, config: configuration.Config, available: dict, timeout_s: float,
                   folder: Optional[Path] = None) -> dict:
    bench, rnd, contender, extra = step
    row = {"bench": bench, "round": rnd, "contender": contender, "allocator": extra}
    if bench == "object-drag":  # contender = the workload, extra = its mode
        return _object_drag_step(row, config, timeout_s, folder)
    if bench == "pages":  # contender = the workload, extra = the allocator
        return _pages_step(row, config.bench["pages"], config.seed, timeout_s, folder)
    if bench == "memory-operations":  # contender = the workload, naive on glibc
        return _memory_operations_step(row, config.bench["memory-operations"], config.seed, timeout_s, folder)
    env = dict(os.environ, STRATA_REAP_CHECK="0")
    try:
        if bench.removesuffix("-callgrind") in LAYERS_PROGRAMS:
            _layers_step(row, LAYERS_PROGRAMS[bench.removesuffix("-callgrind")], config, timeout_s)
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


def _layers_step(row: dict, program, config: configuration.Config, timeout_s: float) -> None:
    """One contender of bench/layers: timed (seconds and the loop's CPU time) or under callgrind (instructions)."""
    exe, table, contender = str(_bench_program(program.path)), config.bench[program.workload], row["contender"]
    if not row["bench"].endswith("-callgrind"):
        out = subprocess.run([exe, contender, str(table.get("ops", 2_000_000))], capture_output=True, text=True,
                             check=True, timeout=timeout_s).stdout
        fields = dict(kv.split("=", 1) for kv in out.split())
        row.update(status="ok", seconds=float(fields["seconds"]), cpu_seconds=float(fields["cpu_seconds"]))
        return
    argv = [exe, contender, str(table.get("callgrind_ops", 200_000))]
    row.update(status="ok", instructions=valgrind.instructions(argv, dict(os.environ), timeout_s=timeout_s * 50))


def _object_drag_step(row: dict, config: configuration.Config, timeout_s: float, folder: Optional[Path]) -> dict:
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


def _pages_step(row: dict, table: dict, seed: int, timeout_s: float, folder: Optional[Path]) -> dict:
    """One workload on one allocator under strata-pages; its files go to folder/pages/<workload>-<allocator>.
    Swap prefetching is simulated at PREFETCH_FRACTION of glibc's footprint (the same memory for all)."""
    w = workloads.lookup(row["contender"])
    mode = table.get("mode", "naive")
    scale = max(1, round(w.default_scale * table.get("scale", 0.02)))
    row.update(scale=scale, mode=mode)
    out = folder / "pages" / f"{w.name}-{row['allocator']}" if folder is not None else None
    start = time.monotonic()
    try:
        argv = w.invocation(mode, scale, seed).argv
        run = lambda preload, **kw: pages.measure(argv, quiet=True, window=table.get("window", pages.DEFAULT_WINDOW),
                                                  timeout_s=timeout_s * 100, plot=False, preload=preload, **kw)
        memory = max(1, round(PREFETCH_FRACTION * _glibc_footprint(folder, w.name, lambda: run(()))))
        figures = run(allocators.resolve(row["allocator"], "bench.pages.allocators").preload(), out_dir=out,
                      prefetch_memory=[memory])
        prefetch = figures["prefetch"][0]
        row.update(status="crashed" if figures["partial"] else "ok", references=figures["references"],
                   distinct_pages=figures["distinct_pages"], knee_pages=figures["knee_pages"],
                   peak_working_set=figures["peak_working_set"], prefetch_memory_pages=memory,
                   prefetch_misses=prefetch["misses"], prefetchable=prefetch["prefetchable"])
    except (LabError, ProgramFailed) as error:
        row.update(status="failed", error=str(error)[:300])
    row["seconds"] = time.monotonic() - start
    return row


def _memory_operations_step(row: dict, table: dict, seed: int, timeout_s: float, folder: Optional[Path]) -> dict:
    """One workload, naive on glibc, under callgrind: the share of its instructions in malloc and free."""
    w = workloads.lookup(row["contender"])
    row.update(scale=table.get("scale", 1), mode="naive")
    out = folder / "valgrind" / f"callgrind.memory-operations.{w.name}.out" if folder is not None else None
    start = time.monotonic()
    try:
        if out is None:
            raise LabError("memory-operations: no results folder for callgrind's output")
        out.parent.mkdir(exist_ok=True)
        row.update(status="ok", memory_operations_percent=calibration.measure_memory_operations(
            w, row["scale"], out, seed, timeout_s=timeout_s * 100))
    except (LabError, ProgramFailed, subprocess.TimeoutExpired) as error:
        row.update(status="failed", error=str(error)[:300])
    row["seconds"] = time.monotonic() - start
    return row


PREFETCH_FRACTION = 0.5


def _glibc_footprint(folder: Optional[Path], workload: str, probe) -> int:
    """The distinct pages of the workload on glibc: from its run in this evaluation, else from probe()."""
    done = folder / "pages" / f"{workload}-glibc" / "pages.json" if folder is not None else None
    if done is not None and done.is_file():
        return json.loads(done.read_text())["distinct_pages"]
    return probe()["distinct_pages"]
