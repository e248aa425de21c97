"""`strata-lab evaluate`: runs a config's matrix and writes a results folder.

The order of work:
  1. the plan (plan.py): config checked, allocators resolved, invocations
     built, before anything runs;
  2. profiles, once per (workload, mode, scale), on glibc: the statistics
     section's figures and the preconditioner's size distributions;
  3. base rounds: each round runs every cell once, in a shuffled order, so
     runs of different cells interleave and ratios pair runs of one round;
     a program's cells run back to back (round_order), and within them an
     allocator's, and within those a preset's modes, so the two runs of a
     pair are neighbours and share the machine's load;
  4. memory runs of the memory sections' cells, in rounds of their own;
  5. the timed benchmark programs of [bench.*], interleaved the same way, and
     the misuse suite on the hardening section's allocators (misuse_suite.py);
  6. the deterministic steps, side by side, one per core: the counted
     benchmarks (callgrind, object drag, page traces) and one cachegrind run
     per cell of the cachegrind sections (every cell with --cachegrind), at
     the config's cachegrind scale;
  7. adaptive rounds (adaptive.py) for the cells of undecided claims, within
     the time budget.

Everything is appended to the CSV files as it is measured, so Ctrl-C keeps
what was gathered and the report says it is partial."""
import datetime
import functools
import os
import random
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Optional

from .. import misuse_suite
from . import adaptive, bench_steps, cell_runs, machine
from .folder import (BENCH_FIELDS, MEMORY_FIELDS, PROFILE_FIELDS, RUN_FIELDS, VALGRIND_FIELDS, CsvLog, FolderLock,
                     write_json)
from .plan import Plan, cachegrind_scale, plan, precondition_profile
from .progress import Interrupt, Progress
from .valgrind_runs import valgrind_run


def round_order(cells: list, rng: random.Random) -> list:
    """The cells of a round in a shuffled order that keeps each (workload, scale)'s cells together, and within
    them each allocator's, and within those each preset's: the modes of one allocator and preset run one after
    another.

    Every ratio the report computes pairs two cells of one program at one scale (modes, allocators or presets
    against each other). Shuffled one by one, a round's cells spread over minutes, and on a shared machine
    the two runs of a pair then meet different loads: the pairing no longer cancels the load. The most-used
    pairs are modes of one allocator and preset (custom against naive or reap: regions, reaps, per-class),
    then presets of one allocator and mode (resilience): nesting allocator > preset > mode makes those pairs
    neighbours. A program's cells are many (the default config runs up to 15 cells of compiler at scale 0.1);
    shuffled flat within the program, a reap/custom pair was a few runs apart and its runs' CPU-time ratio
    spread more (docs/lab.md, "Pairs as neighbours"). Every level is shuffled: programs, allocators, presets
    and modes each come in a new order each round."""
    def shuffled_groups(items: list, key) -> list:
        groups = {}
        for item in items:
            groups.setdefault(key(item), []).append(item)
        order = sorted(groups)
        rng.shuffle(order)
        return [groups[k] for k in order]

    out = []
    for program in shuffled_groups(cells, lambda c: (c.workload, c.scale)):
        for allocator in shuffled_groups(program, lambda c: c.allocator):
            for preset in shuffled_groups(allocator, lambda c: c.preset):
                rng.shuffle(preset)
                out += preset
    return out


class Evaluation:
    """One evaluation in progress: its plan, folder, logs and counters."""

    def __init__(self, config, registry: dict, folder: Path, cachegrind: bool, stream):
        self.config, self.registry, self.folder, self.cachegrind = config, registry, folder, cachegrind
        self.plan: Plan = plan(config, registry, every_cell_cachegrind=cachegrind)
        self.steps = bench_steps.bench_steps(config, cachegrind, self.plan.available)
        self.misuse_steps = misuse_suite.evaluation_steps(config, self.plan.available)
        self.stream = stream
        self.profiles = {}          # (workload, mode, scale) -> profile row
        self.rounds_done = {}       # Cell -> timed rounds run
        self.order = self.bench_done = 0
        self.started = time.monotonic()
        self.budget = adaptive.Budget(config.budget_s or 0.0, self.started, config.max_rounds)

    # -- set-up ---------------------------------------------------------------

    def meta(self) -> dict:
        p, c = self.plan, self.config
        meta = {"format": "strata-evaluation", "version": 2, "partial": True, "interrupted": False,
                "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "config": {"path": str(c.path), "name": c.name, "description": c.description, "runs": c.runs,
                           "seed": c.seed, "timeout_s": c.timeout_s, "budget_s": c.budget_s, "toml": c.raw},
                "cachegrind": self.cachegrind, "cachegrind_cells": len(p.valgrind_cells),
                "cachegrind_scale": c.cachegrind_scale, "cachegrind_options": c.cachegrind_options,
                "machine": machine.machine(), "git": machine.git_commit(),
                "allocators": machine.allocator_versions(p.available), "skipped_allocators": p.skipped,
                "not_applicable": p.not_applicable, "not_measured": p.not_measured, "experiments": p.experiments, "workloads": {},
                "planned": {"cells": len(p.cells), "runs": sum(p.cells.values()), "profiles": len(p.profiles),
                            "memory_runs": len(p.memory_cells) * c.memory_runs, "bench_steps": len(self.steps),
                            "misuse_runs": len(self.misuse_steps)}}
        for name in sorted({x.workload for x in p.cells} | {k[0] for k in p.profiles}):
            w = self.registry[name]
            try:
                versions = w.versions()
            except Exception as error:  # a version probe must not stop the evaluation
                versions = {"error": str(error)}
            meta["workloads"][name] = {"kind": w.kind, "imitates": w.imitates, "paper": w.paper,
                                       "modes": list(w.modes), "default_scale": w.default_scale, "test": w.test,
                                       "versions": versions}
        return meta

    def expect(self, progress: Progress) -> None:
        for key in self.plan.profiles:
            progress.expect(("profile",) + key, 1)
        for cell, n in self.plan.cells.items():
            progress.expect(cell, n)
        for cell in self.plan.memory_cells:
            progress.expect(("memory", cell), self.config.memory_runs)
        for step in self.steps:
            progress.expect(("bench", step[0], step[2]), 1)
        for program, allocator in self.misuse_steps:
            progress.expect(("misuse", program.name, allocator), 1)
        for cell in self.plan.valgrind_cells:
            progress.expect(("valgrind", cell), 1)

    def profile_path(self, cell, scale: Optional[int] = None) -> str:
        """The profile a cell's preconditioning draws from (at another scale: a cachegrind run's)."""
        key = precondition_profile(self.registry[cell.workload], cell.mode, cell.scale if scale is None else scale)
        prof = self.profiles.get(key)
        return str(self.folder / prof["path"]) if prof else None

    # -- phases ---------------------------------------------------------------

    def run_profiles(self, logs: dict, progress: Progress, interrupt: Interrupt) -> None:
        for key in self.plan.profiles:
            if interrupt.requested:
                return
            progress.show(f"profiling {key[0]} {key[1]} x{key[2]}")
            row = cell_runs.profile(self.registry, key, self.config.seed, self.folder, self.config.timeout_s * 4)
            if row["status"] == "ok":
                self.profiles[key] = row
            if not interrupt.requested or row["status"] == "ok":
                logs["profiles"].write(row)
            progress.finished(("profile",) + key, row["seconds"])

    def _step(self, what: str, make_row, log: CsvLog, key, progress: Progress, interrupt: Interrupt):
        """One step of a phase: shown, run, its row logged, its time counted. Returns the seconds it took, or
        None when the evaluation stops: interrupted before it, or failed by the same Ctrl-C (not a result)."""
        if interrupt.requested:
            return None
        progress.show(what)
        start = time.monotonic()
        row = make_row()
        if interrupt.requested and row["status"] != "ok":
            return None
        seconds = time.monotonic() - start
        log.write(row)
        progress.finished(key, seconds)
        return seconds

    def timed_round(self, rnd: int, cells: list, logs: dict, progress: Progress, interrupt: Interrupt) -> int:
        """One round of timed runs of cells in a shuffled order; returns how many ran."""
        cells = round_order(list(cells), random.Random(self.config.seed * 7919 + rnd))
        ran = 0
        for cell in cells:
            seconds = self._step(f"round {rnd}: {cell.label()}",
                                 lambda: dict(cell_runs.timed(cell, self.registry, self.config.seed, rnd,
                                                              self.profile_path(cell), self.config.timeout_s),
                                              order=self.order + 1),
                                 logs["runs"], cell, progress, interrupt)
            if seconds is None:
                break
            self.order += 1
            self.budget.durations.setdefault(cell, []).append(seconds)
            self.rounds_done[cell] = self.rounds_done.get(cell, 0) + 1
            ran += 1
        return ran

    def run_base_rounds(self, logs: dict, progress: Progress, interrupt: Interrupt) -> None:
        rounds = max(self.plan.cells.values(), default=0)
        for rnd in range(1, rounds + 1):
            if interrupt.requested:
                return
            self.timed_round(rnd, [c for c, n in self.plan.cells.items() if n >= rnd], logs, progress, interrupt)

    def run_memory(self, logs: dict, progress: Progress, interrupt: Interrupt) -> None:
        """The memory runs, side by side like the deterministic steps: they measure bytes at the profiler's
        events, never time, so a neighbour on the other core moves no figure."""
        jobs = []
        for rnd in range(1, self.config.memory_runs + 1):
            cells = list(self.plan.memory_cells)
            random.Random(self.config.seed * 104729 + rnd).shuffle(cells)
            jobs += [(f"memory {rnd}/{self.config.memory_runs}: {cell.label()}",
                      functools.partial(cell_runs.memory, cell, self.registry, self.config.seed, rnd,
                                        self.profile_path(cell), self.config.timeout_s * 4),
                      logs["memory"], ("memory", cell)) for cell in cells]
        side_by_side(jobs, progress, interrupt, side_by_side_jobs())

    def run_bench(self, logs: dict, progress: Progress, interrupt: Interrupt) -> None:
        for step in self.steps:
            if bench_steps.deterministic(step):
                continue  # run_deterministic's
            if self._step(f"bench {step[0]} round {step[1]}: {step[2]} {step[3]}".strip(),
                          lambda: bench_steps.run_bench_step(step, self.config, self.plan.available,
                                                             self.config.timeout_s, self.folder),
                          logs["bench"], ("bench", step[0], step[2]), progress, interrupt) is None:
                return
            self.bench_done += 1

    def run_misuse(self, logs: dict, progress: Progress, interrupt: Interrupt) -> None:
        for step in self.misuse_steps:
            if self._step(f"misuse suite: {step[0].name} on {step[1]}",
                          lambda: misuse_suite.evaluation_row(step, self.plan.available, self.config.timeout_s),
                          logs["misuse"], ("misuse", step[0].name, step[1]), progress, interrupt) is None:
                return

    def deterministic_jobs(self, logs: dict) -> list:
        """(what, make_row, log, key) of every step whose figures the machine's load cannot move."""
        jobs = [(f"bench {step[0]}: {step[2]} {step[3]}".strip(),
                 functools.partial(bench_steps.run_bench_step, step, self.config, self.plan.available,
                                   self.config.timeout_s, self.folder),
                 logs["bench"], ("bench", step[0], step[2])) for step in self.steps if bench_steps.deterministic(step)]
        for cell in self.plan.valgrind_cells:
            scale = cachegrind_scale(self.config, cell.scale)
            jobs.append((f"cachegrind: {cell.label()} at x{scale}",
                         functools.partial(valgrind_run, cell, scale, self.config.cachegrind_options,
                                           self.registry[cell.workload], self.config.seed,
                                           self.profile_path(cell, scale), self.folder, self.config.timeout_s * 100),
                         logs["valgrind"], ("valgrind", cell)))
        return jobs

    def run_deterministic(self, logs: dict, progress: Progress, interrupt: Interrupt) -> None:
        """The deterministic steps side by side, one per core: nothing is timed meanwhile, so sharing the cores
        moves no figure, and on 2 cores the phase takes half the time, which the adaptive rounds then get."""
        logged = side_by_side(self.deterministic_jobs(logs), progress, interrupt, side_by_side_jobs())
        self.bench_done += sum(key[0] == "bench" for key in logged)

    def run_adaptive(self, logs: dict, progress: Progress, interrupt: Interrupt) -> None:
        """Extra rounds for the cells of undecided claims, while the budget lasts."""
        if not self.config.budget_s:
            self.budget.stopped = "no budget_s in the config: no adaptive rounds"
            return
        # The report (SciPy) only now: imported earlier, it would sit in every run's ru_maxrss fallback.
        from ..report import claims_of
        rnd = max(self.plan.cells.values(), default=0)
        while not interrupt.requested:
            cells = adaptive.next_round(claims_of(self.folder), self.plan.cells, self.rounds_done, self.budget)
            if not cells:
                return
            rnd += 1
            progress.total += len(cells)
            for cell in cells:
                progress.expect(cell, 1)
            self.budget.extra_runs += self.timed_round(rnd, cells, logs, progress, interrupt)
            self.budget.extra_rounds += 1


PHASES = ["run_profiles", "run_base_rounds", "run_memory", "run_bench", "run_misuse", "run_deterministic",
          "run_adaptive"]


def side_by_side_jobs() -> int:
    """How many deterministic steps run at once: one per core this process may use."""
    return max(1, len(os.sched_getaffinity(0)))


def side_by_side(jobs: list, progress: Progress, interrupt: Interrupt, workers: int) -> list:
    """Runs (what, make_row, log, key) jobs, `workers` at a time; logs each row as it finishes (from this thread
    only); returns the keys logged. After a Ctrl-C the jobs not started are cancelled and a row that failed (of
    the same Ctrl-C) is dropped, as _step does."""
    logged = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        running = {pool.submit(_timed, make_row): (what, log, key) for what, make_row, log, key in jobs}
        pending = set(running)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                what, log, key = running[future]
                row, seconds = future.result()
                if interrupt.requested:
                    # cancel() wakes no waiter: a cancelled job leaves pending here, not by wait()
                    pending = {f for f in pending if not f.cancel()}
                    if row["status"] != "ok":
                        continue
                progress.show(what)
                log.write(row)
                progress.finished(key, seconds)
                logged.append(key)
    return logged


def _timed(make_row) -> tuple:
    start = time.monotonic()
    row = make_row()
    return row, time.monotonic() - start


def _open_logs(folder: Path, cachegrind: bool) -> dict:  # cachegrind: there are cachegrind runs
    logs = {"profiles": CsvLog(folder / "profiles.csv", PROFILE_FIELDS), "runs": CsvLog(folder / "runs.csv", RUN_FIELDS),
            "memory": CsvLog(folder / "memory.csv", MEMORY_FIELDS), "bench": CsvLog(folder / "bench.csv", BENCH_FIELDS),
            "misuse": CsvLog(folder / "misuse.csv", misuse_suite.FIELDS)}
    if cachegrind:
        logs["valgrind"] = CsvLog(folder / "valgrind.csv", VALGRIND_FIELDS)
    return logs


def evaluate(config, registry: dict, folder: Path, cachegrind: bool = False, stream=sys.stderr) -> dict:
    """Runs the plan into folder; returns meta (with "partial")."""
    e = Evaluation(config, registry, folder, cachegrind, stream)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "profiles").mkdir(exist_ok=True)
    with FolderLock(folder), Interrupt() as interrupt:
        meta = e.meta()
        write_json(folder / "meta.json", meta)
        p = e.plan
        progress = Progress(len(p.profiles) + sum(p.cells.values()) + len(p.memory_cells) * config.memory_runs
                            + len(e.steps) + len(e.misuse_steps) + len(p.valgrind_cells), stream)
        e.expect(progress)
        logs = _open_logs(folder, bool(p.valgrind_cells))
        try:
            for phase in PHASES:
                getattr(e, phase)(logs, progress, interrupt)
        except KeyboardInterrupt:
            interrupt.requested = True
        finally:
            progress.close()
            for log in logs.values():
                log.close()
        meta.update(partial=interrupt.requested, interrupted=interrupt.requested,
                    finished=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    duration_seconds=round(time.monotonic() - e.started, 1),
                    completed={"runs": e.order, "profiles": len(e.profiles), "bench_steps": e.bench_done},
                    adaptive=e.budget.summary(max(p.cells.values(), default=0)),
                    rounds={c.label(): n for c, n in e.rounds_done.items()})
        write_json(folder / "meta.json", meta)
    return meta
