"""What an evaluation will run, checked before anything runs: the cells of
every experiment (workload × mode × scale × allocator × preset), the
profiles, the cells that also get memory runs, and the allocators that are
missing (skipped, with the command that installs them)."""
import shutil
from dataclasses import dataclass, field

from .. import allocators
from . import configuration
from ..errors import LabError



@dataclass(frozen=True)
class Cell:
    workload: str
    mode: str
    scale: int
    allocator: str
    preset: str

    @property
    def key(self) -> tuple:
        """The report's key for it (measurements.cell_key)."""
        return (self.workload, self.mode, self.scale, self.allocator, self.preset)

    def label(self) -> str:
        return f"{self.workload} {self.mode} x{self.scale} {self.allocator} {self.preset}"


def precondition_profile(workload, mode: str, scale: int) -> tuple:
    """The profile a cell's preconditioning draws from. Custom, naive and reap
    modes of one program face the same preconditioned heap: the naive mode's
    object-level profile (2026 §3.1, Fig. 2: one profile per program), when the
    workload has a naive mode."""
    return (workload.name, "naive" if "naive" in workload.modes else mode, scale)


@dataclass
class Plan:
    config: configuration.Config
    cells: dict          # Cell -> runs wanted
    profiles: list       # (workload, mode, scale)
    available: dict      # allocator name -> library path or "" (glibc)
    skipped: dict        # allocator name -> reason and install command
    not_applicable: list  # "workload: mode" pairs dropped because the workload lacks the mode
    experiments: list    # per experiment: its cells (for the report)
    valgrind_cells: list = field(default_factory=list)  # cachegrind runs: config.cachegrind_sections' cells
    memory_cells: list = field(default_factory=list)    # cells of config.memory_sections
    not_measured: dict = field(default_factory=dict)    # real program -> why it cannot run (not installed)


def _resolve_allocators(config: configuration.Config) -> tuple:
    wanted = []
    for experiment in config.experiments:
        wanted += [a for a in experiment.allocators if a not in wanted]
    available, skipped = {}, {}
    for name in wanted:
        try:
            available[name] = str(allocators.resolve(name).library or "")
        except LabError as error:
            skipped[name] = str(error)  # names what is missing and how to get it (the registry's hint)
    available.setdefault("glibc", "")  # profiles run on glibc
    return available, skipped


def cachegrind_scale(config: configuration.Config, scale: int) -> int:
    """The scale of a cell's cachegrind run (config.cachegrind_scale of the cell's)."""
    return max(1, round(scale * config.cachegrind_scale))


def plan(config: configuration.Config, registry: dict, every_cell_cachegrind: bool = False) -> Plan:
    """Everything that can be checked before anything runs. every_cell_cachegrind
    (--cachegrind): every cell gets a cachegrind run, not only those of
    config.cachegrind_sections."""
    available, skipped = _resolve_allocators(config)
    p = Plan(config, {}, [], available, skipped, [], [])
    for experiment in config.experiments:
        mine = []
        for name in experiment.workloads:
            workload = registry[name]
            scale = experiment.scale_of(name, workload.default_scale)
            if name in p.not_measured or not _runnable(p, workload, scale, config.seed):
                continue
            for mode in experiment.modes:
                if mode not in workload.modes:
                    if f"{name}: {mode}" not in p.not_applicable:
                        p.not_applicable.append(f"{name}: {mode}")
                    continue
                workload.invocation(mode, scale, config.seed)  # missing binary, bad scale: before anything runs
                for key in ((name, mode, scale), precondition_profile(workload, mode, scale)):
                    if key not in p.profiles:
                        p.profiles.append(key)
                if experiment.section != "statistics":  # statistics: profiles only
                    mine += _add_cells(p, config, experiment, name, mode, scale, every_cell_cachegrind)
        p.experiments.append({"section": experiment.section, "title": experiment.title,
                              "workloads": experiment.workloads, "allocators": experiment.allocators,
                              "modes": experiment.modes, "presets": experiment.presets,
                              "scales": {n: experiment.scale_of(n, registry[n].default_scale)
                                         for n in experiment.workloads},
                              "runs": experiment.runs, "cells": len(mine)})
    for cell in p.valgrind_cells:  # a preconditioned cachegrind run draws from a profile of its own scale
        key = precondition_profile(registry[cell.workload], cell.mode, cachegrind_scale(config, cell.scale))
        if cell.preset != "Adv0" and key not in p.profiles:
            p.profiles.append(key)
    if p.valgrind_cells and not shutil.which("valgrind"):
        raise LabError("the cachegrind runs (cachegrind_sections, --cachegrind) need valgrind "
                       "(apt-get install valgrind; make setup)")
    return p


def _runnable(p: Plan, workload, scale: int, seed: int) -> bool:
    """A real program that cannot run here (its Debian package is missing) is not measured, with the reason,
    and the rest of the evaluation goes on; a workload of our own that cannot run is an error."""
    if workload.kind != "program":
        return True
    try:
        workload.invocation(workload.modes[0], scale, seed)
    except LabError as error:
        p.not_measured[workload.name] = str(error)
        return False
    return True


def _add_cells(p: Plan, config: configuration.Config, experiment, name: str, mode: str, scale: int,
               every_cell_cachegrind: bool) -> list:
    mine = []
    for allocator in experiment.allocators:
        if allocator not in p.available:
            continue
        for preset in experiment.presets:
            cell = Cell(name, mode, scale, allocator, preset)
            p.cells[cell] = max(p.cells.get(cell, 0), experiment.runs)
            mine.append(cell)
            cachegrind = every_cell_cachegrind or experiment.section in config.cachegrind_sections
            if cachegrind and cell not in p.valgrind_cells:
                p.valgrind_cells.append(cell)
            if experiment.section in config.memory_sections and cell not in p.memory_cells:
                p.memory_cells.append(cell)
    return mine
