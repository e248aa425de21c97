"""What the benchmarks share: option checks that name the bad option before
anything runs, the build's benchmark programs, running one of them,
interleaved rounds, per-round figures paired through the evaluation's
statistics, and Markdown tables."""
import os
import platform
import random
import shlex
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from .. import allocators, measurements, runner
from ..errors import LabError, ProgramFailed
from ..paths import build_dir

MIN_ROUNDS = 5  # medians of fewer runs are noise


# ---------------------------------------------------------------------------
# Options.

def add_benchmark(sub, name: str, summary: str, doc: str, command):
    """The benchmark's subcommand, with what every benchmark takes (--rounds);
    doc's first paragraph is its description."""
    p = sub.add_parser(name, help=summary, description=doc.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=7, help=f"interleaved rounds (>= {MIN_ROUNDS}; default 7)")
    p.set_defaults(bench=command)
    return p


def check_rounds(rounds: int, quick_allows_fewer: bool = False, quick: bool = False) -> None:
    if rounds < 1 or (rounds < MIN_ROUNDS and not (quick_allows_fewer and quick)):
        fewer = "; --quick allows fewer" if quick_allows_fewer else ""
        raise LabError(f"--rounds {rounds}: at least {MIN_ROUNDS} (medians of fewer runs are noise){fewer}")


def check_positive(option: str, value: int) -> None:
    if value < 1:
        raise LabError(f"{option} {value}: must be at least 1")


def names(option: str, text: str, known: Sequence[str]) -> list:
    """A comma-separated list of known names, in the order given."""
    chosen = [n for n in text.split(",") if n]
    bad = [n for n in chosen if n not in known]
    if bad or not chosen:
        raise LabError(f"{option}: unknown name(s) {', '.join(bad) or repr(text)}; known: {', '.join(known)}")
    return chosen


def available_allocators(option: str, wanted: Optional[str], default: Sequence[str],
                         registry_name=lambda name: name) -> dict:
    """name -> allocators.Allocator. Named with option, a missing one is an
    error (with its install hint) before anything runs; from the default
    list, the missing ones are left out with one note on stderr."""
    chosen = names(option, wanted, default) if wanted is not None else list(default)
    found, missing = {}, []
    for name in chosen:
        try:
            found[name] = allocators.resolve(registry_name(name), option, label=name)
        except LabError:
            if wanted is not None:
                raise
            missing.append(f"{name} ({allocators.install_hint(registry_name(name))})")
    if missing:
        print(f"strata-lab bench: left out, not installed or not built: {', '.join(missing)}", file=sys.stderr)
    return found


# ---------------------------------------------------------------------------
# The build's benchmark programs, and running one.

def program(relative: str) -> Path:
    """A program of the build (STRATA_LAB_BUILD_DIR, else build/release)."""
    path = build_dir() / relative
    if not os.access(path, os.X_OK):
        raise LabError(f"{path} is missing: build it (`make build`, or point STRATA_LAB_BUILD_DIR at a build)")
    return path


def run(argv: Sequence, preload: Sequence[str] = (), variables: Optional[dict] = None,
        cwd: Optional[str] = None) -> runner.RunResult:
    """Runs a benchmark program to completion with its output captured; one
    that fails stops the benchmark (ProgramFailed) with its messages."""
    result = runner.run([str(a) for a in argv], list(preload), variables or {}, capture=True, cwd=cwd)
    if not result.ok:
        raise ProgramFailed(f"{shlex.join(result.command)} {result.status()}"
                            + (f" (LD_PRELOAD={':'.join(preload)})" if preload else "")
                            + f":\n{(result.stderr_tail or '').strip()[-2000:]}")
    return result


def fields(line: str) -> dict:
    """key=value pairs of a program's report line."""
    return dict(item.split("=", 1) for item in line.split() if "=" in item)


# ---------------------------------------------------------------------------
# Rounds: every round runs every contender once, so slow drifts of the
# machine hit all contenders alike.

def shuffled_rounds(rounds: int, contenders: Sequence, seed: int):
    """(round, order) with the order shuffled per round (reproducible by seed)."""
    rng = random.Random(seed)
    for rnd in range(rounds):
        order = list(contenders)
        rng.shuffle(order)
        yield rnd, order


def rotated_rounds(rounds: int, contenders: Sequence):
    """(round, order) with the order rotated by one each round."""
    contenders = list(contenders)
    for rnd in range(rounds):
        shift = rnd % len(contenders)
        yield rnd, contenders[shift:] + contenders[:shift]


class Measurements:
    """Per-round figures of each (workload, contender), kept as the
    evaluation's run rows so that its statistics pair them within a round."""

    def __init__(self):
        self.rows = []

    @staticmethod
    def key(workload: str, contender: str) -> tuple:
        return (workload, "", 0, contender, "")

    def add(self, rnd: int, workload: str, contender: str, figures: dict) -> None:
        self.rows.append(dict(figures, round=rnd, workload=workload, mode="", scale=0, allocator=contender,
                              preset="", verdict="ok"))

    def by_round(self, workload: str, contender: str, metric: str) -> dict:
        return measurements.by_round(self.rows, self.key(workload, contender), metric)

    def values(self, workload: str, contender: str, metric: str) -> list:
        return list(self.by_round(workload, contender, metric).values())

    def summary(self, workload: str, contender: str, metric: str) -> Optional[measurements.Summary]:
        return measurements.summarize(self.values(workload, contender, metric))

    def median(self, workload: str, contender: str, metric: str) -> float:
        return self.summary(workload, contender, metric).median

    def paired(self, workload: str, contender: str, reference: str, metric: str) -> Optional[measurements.Summary]:
        """contender / reference within each round: median, min, max."""
        return measurements.paired(self.rows, self.key(workload, contender), self.key(workload, reference), metric)

    def ratio(self, workload: str, contender: str, reference: str, metric: str) -> float:
        return self.paired(workload, contender, reference, metric).median


def geomean(values) -> float:
    return measurements.geometric_mean(list(values))


# ---------------------------------------------------------------------------
# Markdown.

def table(header: Sequence[str], rows: Sequence[Sequence], align: Optional[str] = None) -> list:
    """A Markdown table; align: one letter per column, l (left) or r (right);
    default: the first column left, the others right."""
    align = align or "l" + "r" * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "|" + "".join("---|" if a == "l" else "---:|" for a in align)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def command_line() -> str:
    """How this benchmark was started, as a user would type it."""
    return shlex.join(["strata-lab", "bench", *sys.argv[2:]])


def started() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def machine() -> str:
    return f"{platform.node()}, {os.cpu_count()} CPUs, load average " + " ".join(
        f"{x:.2f}" for x in os.getloadavg())


def emit(lines: Sequence[str]) -> None:
    """Prints a finished piece of the report at once (a long run shows each table when it is ready)."""
    print("\n".join(lines), flush=True)


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def check_same(runs: Measurements, field: str, what: str) -> None:
    """Every workload allocates the same objects (every program prints the
    same) under every allocator."""
    seen = {}
    for row in runs.rows:
        seen.setdefault(row["workload"], {}).setdefault(row["allocator"], set()).add(row[field])
    for workload, by_contender in seen.items():
        if len(set().union(*by_contender.values())) != 1:
            raise ProgramFailed(f"{workload}: {what}: "
                                f"{ {c: sorted(v) for c, v in by_contender.items()} }")
