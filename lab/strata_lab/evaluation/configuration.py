"""The evaluation's configuration (lab/configs/*.toml): which experiments run,
each a sub-matrix of workloads x allocators x modes x presets at a scale.

    [evaluation]
    runs = 5                # timed runs of every cell (at least 5)
    seed = 1                # the workloads' input seed (and the preconditioner's)
    timeout_s = 300         # a run that takes longer is killed and recorded as a timeout
    cachegrind_sections = ["general-purpose"]  # these sections' cells get one cachegrind run each
                            # (default: none; --cachegrind: every cell)
    cachegrind_scale = 0.5  # the cachegrind runs at this fraction of each cell's scale (default 1)
    cachegrind_options = ["--D1=8192,4,64", "--LL=524288,8,64"]  # the simulated caches (default: cachegrind's)
    memory_sections = ["reaps"]  # these sections' cells also get memory runs (fragmentation, pages in use)
    memory_runs = 3         # memory runs of each such cell, in interleaved rounds
    budget_s = 900          # adaptive rounds: after the base rounds, add rounds to the cells of undecided
                            # claims until every claim decides or the evaluation has run this long
    max_rounds = 20         # adaptive rounds: at most this many rounds of any cell

    [[experiment]]
    section = "per-class"   # the report section it feeds (SECTIONS)
    workloads = ["boxed-sim"]
    allocators = ["glibc", "mimalloc"]
    modes = ["custom", "naive"]
    presets = ["Adv0", "Adv3"]
    scale = 0.25            # fraction of each workload's default_scale (rounded, at least 1)
    scales = {boxed-sim = 4}  # optional: absolute scales per workload
    runs = 5                # optional: overrides [evaluation] runs

Sections that run a benchmark program rather than workloads take their
parameters in a table of their own: [bench.zero-cost], [bench.special] (the
2001 paper's §5: XallocHeap and ObstackHeap against the originals), [bench.drag]
and [bench.object-drag] (BENCH_FIELDS). [bench.object-drag] measures object drag
under strata-drag (docs/drag.md): workloads = [native workloads], modes
(default all three), scale (fraction of each default scale, default 0.1).
[bench.pages] measures page-level locality under strata-pages (docs/pages.md):
workloads, allocators, mode (default naive), scale (default 0.02), window.

Your own programs: a [[program]] table names a program the evaluation runs like a workload (docs/lab.md,
"Evaluate your own program"); experiments name it in their workloads (section "user-program" gives the
report its first screen, report/user_program.py):

    [[program]]
    name = "myprog"         # a name of your choosing, not a workload's
    argv = ["./myprog", "--input", "data.txt"]
    env = {MYPROG_THREADS = "1"}   # optional: added to its environment
    checksum = "none"       # "none" (default: only its exit status is checked), "stdout" (its output must
                            # be the same in every run) or "line" (it prints "checksum <hex>" last)

`strata-lab evaluate -- CMD ARGS...` writes such a config (user_config) and runs it.

Every error names the offending field and is raised before anything runs."""
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .. import precondition
from ..errors import LabError

# The report's sections, in report order (strata_lab/report/sections/ renders them).
SECTIONS = ["per-class", "regions", "resilience", "occupancy", "real-programs", "reaps", "statistics",
            "general-purpose", "heap-layers", "vam-variants", "page-locality", "hardening", "user-program"]
MODES = ["custom", "naive", "reap"]
PRESETS = ["Adv0", "Adv1", "Adv3", "Adv10"] + [p.name for p in precondition.SWEEP]
# Allocators the evaluation knows by name. kingsley and lea are the layer-built
# LD_PRELOAD libraries (allocators.resolve() knows them once they are built).
EXTRA_ALLOCATORS = ["kingsley", "lea"]

EVALUATION_FIELDS = {"runs": int, "seed": int, "timeout_s": (int, float), "name": str, "description": str,
                     "cachegrind_sections": list, "cachegrind_scale": (int, float),
                     "cachegrind_options": list, "memory_sections": list, "memory_runs": int,
                     "budget_s": (int, float), "max_rounds": int}
DEFAULT_MEMORY_SECTIONS = ["reaps", "general-purpose", "heap-layers"]
EXPERIMENT_FIELDS = {"section": str, "workloads": list, "allocators": list, "modes": list, "presets": list,
                     "scale": (int, float), "scales": dict, "runs": int, "title": str}
BENCH_FIELDS = {
    "zero-cost": {"ops": int, "rounds": int, "callgrind_ops": int},      # bench/layers bench_zero_cost
    "special": {"ops": int, "rounds": int, "callgrind_ops": int},        # bench/layers bench_special (2001 §5)
    "drag": {"phases": int, "objects": int, "runs": int},                # bench/reap drag workload
    "object-drag": {"workloads": list, "modes": list, "scale": (int, float)},  # strata-drag (docs/drag.md)
    "pages": {"workloads": list, "allocators": list, "mode": str, "scale": (int, float), "window": int},  # strata-pages
    # 2002 Table 3's time in memory operations: each workload once under callgrind (calibration.py), naive on glibc
    "memory-operations": {"workloads": list, "scale": int},
}
PROGRAM_FIELDS = {"name": str, "argv": list, "env": dict, "checksum": str}
PROGRAM_CHECKSUMS = ("none", "stdout", "line")
# `evaluate -- CMD`: the allocators every program is timed on, the ones it is preconditioned on (Adv3), and the
# memory runs (fragmentation) of every cell.
USER_ALLOCATORS = ["glibc", "jemalloc", "tcmalloc", "mimalloc", "strata"]
USER_ADV3_ALLOCATORS = ["glibc", "jemalloc", "mimalloc"]
MIN_RUNS = 5


@dataclass
class Experiment:
    section: str
    workloads: list
    allocators: list
    modes: list
    presets: list
    scale: float = 1.0
    scales: dict = field(default_factory=dict)
    runs: int = MIN_RUNS
    title: str = ""

    def scale_of(self, name: str, default_scale: int) -> int:
        if name in self.scales:
            return self.scales[name]
        return max(1, round(default_scale * self.scale))


@dataclass
class Config:
    path: str
    name: str
    runs: int
    seed: int
    timeout_s: float
    experiments: list
    bench: dict
    description: str = ""
    raw: dict = field(default_factory=dict)
    cachegrind_sections: list = field(default_factory=list)  # one cachegrind run per cell (--cachegrind: all)
    cachegrind_scale: float = 1.0      # the cachegrind runs' scale, as a fraction of the cell's
    cachegrind_options: list = field(default_factory=list)  # e.g. the simulated cache geometry
    memory_sections: list = field(default_factory=lambda: list(DEFAULT_MEMORY_SECTIONS))
    memory_runs: int = 3
    budget_s: Optional[float] = None   # None: no adaptive rounds
    max_rounds: int = 20
    programs: list = field(default_factory=list)   # [[program]] tables, checked

    def sections(self) -> list:
        present = {e.section for e in self.experiments}
        return [s for s in SECTIONS if s in present]


def _type_name(types) -> str:
    types = types if isinstance(types, tuple) else (types,)
    names = {int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}
    return " or ".join(names[t] for t in types)


def _check_type(where: str, value, types) -> None:
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool) or not isinstance(value, types):
        raise LabError(f"{where}: expected {_type_name(types)}, got {type(value).__name__} {value!r}")


def _check_fields(where: str, table: dict, allowed: dict) -> None:
    for key, value in table.items():
        if key not in allowed:
            raise LabError(f"{where}.{key}: unknown field (known: {', '.join(allowed)})")
        _check_type(f"{where}.{key}", value, allowed[key])


def _names(where: str, values: list, known: list, what: str) -> list:
    if not values:
        raise LabError(f"{where}: empty list")
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise LabError(f"{where}[{i}]: expected a string, got {value!r}")
        if value not in known:
            raise LabError(f"{where}[{i}]: unknown {what} '{value}' (known: {', '.join(known)})")
    if len(set(values)) != len(values):
        raise LabError(f"{where}: a {what} is listed twice")
    return list(values)


def known_allocators() -> list:
    from .. import allocators
    return list(allocators.KNOWN) + [a for a in EXTRA_ALLOCATORS if a not in allocators.KNOWN]


def parse(text: str, path: str, workload_names: list, allocator_names: Optional[list] = None) -> Config:
    """A checked Config from TOML text; workload_names = the registry's names."""
    allocator_names = allocator_names if allocator_names is not None else known_allocators()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LabError(f"{path}: malformed TOML: {error}") from None
    known_top = {"evaluation", "experiment", "bench", "program"}
    for key in data:
        if key not in known_top:
            raise LabError(f"{path}: {key}: unknown table (known: evaluation, experiment, bench, program)")
    programs = _programs(path, data.get("program", []), workload_names)
    workload_names = list(workload_names) + [p["name"] for p in programs]
    evaluation = data.get("evaluation", {})
    _check_type(f"{path}: evaluation", evaluation, dict)
    _check_fields(f"{path}: evaluation", evaluation, EVALUATION_FIELDS)
    runs, seed, timeout_s = _basics(path, evaluation)
    cachegrind = _cachegrind(path, evaluation)
    memory_sections = evaluation.get("memory_sections", DEFAULT_MEMORY_SECTIONS)
    if memory_sections:
        _names(f"{path}: evaluation.memory_sections", memory_sections, SECTIONS, "section")
    adaptive = _adaptive(path, evaluation, runs)
    raw_experiments = data.get("experiment", [])
    if not isinstance(raw_experiments, list) or not all(isinstance(e, dict) for e in raw_experiments):
        raise LabError(f"{path}: experiment: expected [[experiment]] tables")
    if not raw_experiments and not data.get("bench"):
        raise LabError(f"{path}: experiment: no [[experiment]] and no [bench.*]: nothing to run")
    experiments = [_experiment(f"{path}: experiment[{i}]", raw, runs, workload_names, allocator_names)
                   for i, raw in enumerate(raw_experiments)]
    bench = _bench(path, data.get("bench", {}), workload_names, allocator_names)
    return Config(path, evaluation.get("name", Path(path).stem), runs, seed, timeout_s, experiments, bench,
                  evaluation.get("description", ""), data, *cachegrind, list(memory_sections), *adaptive, programs)


def _programs(path: str, raw, workload_names: list) -> list:
    """The [[program]] tables, checked: a name of its own, a non-empty argv of strings, env of strings."""
    if not isinstance(raw, list) or not all(isinstance(p, dict) for p in raw):
        raise LabError(f"{path}: program: expected [[program]] tables")
    out = []
    for i, table in enumerate(raw):
        where = f"{path}: program[{i}]"
        _check_fields(where, table, PROGRAM_FIELDS)
        name = table.get("name")
        if not name or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
            raise LabError(f"{where}.name: expected a name of letters, digits, '.', '_' or '-', got {name!r}")
        if name in workload_names or any(p["name"] == name for p in out):
            raise LabError(f"{where}.name: '{name}' is already a workload's or another program's name")
        argv = table.get("argv")
        if not argv or not all(isinstance(a, str) and a for a in argv):
            raise LabError(f"{where}.argv: expected a non-empty list of non-empty strings (the command line)")
        env = table.get("env", {})
        if not all(isinstance(v, str) for v in env.values()):
            raise LabError(f"{where}.env: expected strings as values")
        checksum = table.get("checksum", "none")
        if checksum not in PROGRAM_CHECKSUMS:
            raise LabError(f"{where}.checksum: '{checksum}': expected one of {', '.join(PROGRAM_CHECKSUMS)}")
        out.append({"name": name, "argv": list(argv), "env": dict(env), "checksum": checksum})
    return out


def user_config(argv: list, name: str, runs: int = MIN_RUNS, timeout_s: float = 600) -> str:
    """The config of `strata-lab evaluate -- CMD`: the program, in its one mode (naive: its allocations go to
    malloc), on USER_ALLOCATORS at Adv0 and USER_ADV3_ALLOCATORS at Adv3, with memory runs of every cell."""
    def toml(value) -> str:  # a JSON string or list of strings is a TOML basic string or array
        return json.dumps(value)
    return "\n".join([
        "[evaluation]", f"name = {toml('program: ' + name)}",
        f"description = {toml('strata-lab evaluate -- ' + ' '.join(argv))}",
        f"runs = {runs}", "seed = 1", f"timeout_s = {timeout_s}", 'memory_sections = ["user-program"]',
        "memory_runs = 3", "",
        "[[program]]", f"name = {toml(name)}", f"argv = {toml(list(argv))}", "",
        "[[experiment]]", 'section = "user-program"', f"workloads = {toml([name])}",
        f"allocators = {toml(USER_ALLOCATORS)}", 'modes = ["naive"]', 'presets = ["Adv0"]', "",
        "[[experiment]]", 'section = "user-program"', f"workloads = {toml([name])}",
        f"allocators = {toml(USER_ADV3_ALLOCATORS)}", 'modes = ["naive"]', 'presets = ["Adv3"]', ""])


def _cachegrind(path: str, evaluation: dict) -> tuple:
    """(sections, scale, options) of the cachegrind runs, checked."""
    sections = evaluation.get("cachegrind_sections", [])
    if sections:
        _names(f"{path}: evaluation.cachegrind_sections", sections, SECTIONS, "section")
    scale = evaluation.get("cachegrind_scale", 1.0)
    if not 0 < scale <= 1:
        raise LabError(f"{path}: evaluation.cachegrind_scale: expected a fraction in (0, 1], got {scale!r}")
    options = evaluation.get("cachegrind_options", [])
    for i, option in enumerate(options):
        if not isinstance(option, str) or not re.fullmatch(r"--(I1|D1|LL)=\d+,\d+,\d+", option):
            raise LabError(f"{path}: evaluation.cachegrind_options[{i}]: expected --I1=, --D1= or --LL="
                           f"<size>,<associativity>,<line size>, got {option!r}")
    return list(sections), float(scale), list(options)


def _basics(path: str, evaluation: dict) -> tuple:
    """(runs, seed, timeout_s), checked."""
    runs = evaluation.get("runs", MIN_RUNS)
    if runs < MIN_RUNS:
        raise LabError(f"{path}: evaluation.runs: {runs}: at least {MIN_RUNS} runs per cell")
    seed = evaluation.get("seed", 1)
    if seed < 0:
        raise LabError(f"{path}: evaluation.seed: {seed}: must be >= 0")
    timeout_s = float(evaluation.get("timeout_s", 600))
    if timeout_s <= 0:
        raise LabError(f"{path}: evaluation.timeout_s: {timeout_s:g}: must be > 0")
    return runs, seed, timeout_s


def _experiment(where: str, raw: dict, runs: int, workload_names: list, allocator_names: list) -> Experiment:
    _check_fields(where, raw, EXPERIMENT_FIELDS)
    if "section" not in raw:
        raise LabError(f"{where}.section: missing (one of {', '.join(SECTIONS)})")
    if raw["section"] not in SECTIONS:
        raise LabError(f"{where}.section: unknown section '{raw['section']}' (known: {', '.join(SECTIONS)})")
    where = f"{where} ({raw['section']})"
    if "workloads" not in raw:
        raise LabError(f"{where}.workloads: missing")
    workloads = _names(f"{where}.workloads", raw["workloads"], workload_names, "workload")
    statistics_only = raw["section"] == "statistics"
    allocators = _names(f"{where}.allocators", raw.get("allocators", ["glibc"] if statistics_only else []),
                        allocator_names, "allocator")
    modes = _names(f"{where}.modes", raw.get("modes", ["naive"] if statistics_only else []), MODES, "mode")
    presets = _names(f"{where}.presets", raw.get("presets", ["Adv0"]), PRESETS, "preset")
    scale = float(raw.get("scale", 1.0))
    if scale <= 0:
        raise LabError(f"{where}.scale: {scale:g}: must be > 0")
    scales = raw.get("scales", {})
    for name, value in scales.items():
        if name not in workloads:
            raise LabError(f"{where}.scales.{name}: not one of this experiment's workloads")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise LabError(f"{where}.scales.{name}: expected a positive integer, got {value!r}")
    exp_runs = raw.get("runs", runs)
    if exp_runs < MIN_RUNS:
        raise LabError(f"{where}.runs: {exp_runs}: at least {MIN_RUNS} runs per cell")
    return Experiment(raw["section"], workloads, allocators, modes, presets, scale, dict(scales), exp_runs,
                      raw.get("title", ""))


def _bench(path: str, bench, workload_names: list, allocator_names: Optional[list] = None) -> dict:
    _check_type(f"{path}: bench", bench, dict)
    for name, table in bench.items():
        if name not in BENCH_FIELDS:
            raise LabError(f"{path}: bench.{name}: unknown benchmark (known: {', '.join(BENCH_FIELDS)})")
        _check_type(f"{path}: bench.{name}", table, dict)
        _check_fields(f"{path}: bench.{name}", table, BENCH_FIELDS[name])
        for key, value in table.items():
            if isinstance(value, int) and value < 1:
                raise LabError(f"{path}: bench.{name}.{key}: {value}: must be >= 1")
        if "rounds" in table and table["rounds"] < MIN_RUNS:
            raise LabError(f"{path}: bench.{name}.rounds: {table['rounds']}: at least {MIN_RUNS}")
        if name == "object-drag":
            where = f"{path}: bench.object-drag"
            _names(f"{where}.workloads", table.get("workloads", []), workload_names, "workload")
            _names(f"{where}.modes", table.get("modes", MODES), MODES, "mode")
            if table.get("scale", 0.1) <= 0:
                raise LabError(f"{where}.scale: {table['scale']}: must be > 0")
        if name == "pages":
            _pages_bench(f"{path}: bench.pages", table, workload_names, allocator_names)
        if name == "memory-operations":
            _names(f"{path}: bench.memory-operations.workloads", table.get("workloads", []), workload_names,
                   "workload")
    return {k: dict(v) for k, v in bench.items()}


def _pages_bench(where: str, table: dict, workload_names: list, allocator_names: Optional[list]) -> None:
    """[bench.pages] (strata-pages, docs/pages.md): workloads and allocators named, a mode, scale > 0."""
    for key in ("workloads", "allocators"):
        if not table.get(key):
            raise LabError(f"{where}.{key}: missing (a list of names)")
    _names(f"{where}.workloads", table["workloads"], workload_names, "workload")
    if allocator_names is not None:
        _names(f"{where}.allocators", table["allocators"], allocator_names, "allocator")
    _names(f"{where}.mode", [table.get("mode", "naive")], MODES, "mode")
    if table.get("scale", 0.02) <= 0:
        raise LabError(f"{where}.scale: {table['scale']}: must be > 0")


def _adaptive(path: str, evaluation: dict, runs: int) -> tuple:
    """(memory_runs, budget_s, max_rounds), checked."""
    memory_runs = evaluation.get("memory_runs", 3)
    if memory_runs < 1:
        raise LabError(f"{path}: evaluation.memory_runs: {memory_runs}: must be >= 1")
    budget_s = evaluation.get("budget_s")
    if budget_s is not None and budget_s <= 0:
        raise LabError(f"{path}: evaluation.budget_s: {budget_s:g}: must be > 0 seconds")
    max_rounds = evaluation.get("max_rounds", 20)
    if max_rounds < runs:
        raise LabError(f"{path}: evaluation.max_rounds: {max_rounds}: must be >= runs ({runs})")
    return memory_runs, (None if budget_s is None else float(budget_s)), max_rounds


def load(path, workload_names: list, allocator_names: Optional[list] = None) -> Config:
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise LabError(f"{path}: no such config file") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as error:
        raise LabError(f"{path}: cannot read the config ({error.__class__.__name__})") from None
    return parse(text, str(path), workload_names, allocator_names)
