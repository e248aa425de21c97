"""The misuse suite (tests/misuse, issue 19): which heap misuses each
allocator stops, and whether it leaves correct programs alone.

Each misuse program does one misuse (double free, invalid free, overflow,
use after free, ...) and exits 0 when nothing stopped it. It counts as
caught when a signal stops it: SIGABRT, SIGSEGV, SIGBUS, SIGILL or SIGTRAP
(an allocator's abort, a guard page, a trap). A read after free cannot be
stopped at the read: the program stops itself with SIGABRT when the freed
bytes no longer hold its secret (zeroed or filled on free), or takes a
SIGSEGV when they were unmapped. Exit 77: the API the program misuses is
absent under that allocator (free_sized in glibc 2.36): not applicable.
A correct program is clean when it exits 0.

The programs are the sources tests/misuse/{misuse,correct}_*.c(pp), built
into <build>/tests/misuse/. `strata-lab misuse` prints the detection table;
the evaluation runs the suite on the allocators of its hardening section."""
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import allocators
from .errors import LabError
from .paths import REPO_ROOT, build_dir

SOURCES = REPO_ROOT / "tests" / "misuse"
CAUGHT_SIGNALS = (signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGTRAP)
NOT_APPLICABLE_EXIT = 77
TIMEOUT_S = 30.0
# The allocators of issue 19's comparison, in the table's order.
DEFAULT_ALLOCATORS = ["glibc", "scudo", "mimalloc-secure", "snmalloc-checks", "strata", "strata-hardened"]
# Outcomes: a misuse is caught, missed, not applicable or failed (another exit status), a correct program clean
# or failed; either may time out (a hang is not a stop by a signal).
CAUGHT, MISSED, NOT_APPLICABLE, CLEAN, FAILED, TIMEOUT = "caught", "missed", "n/a", "clean", "failed", "timeout"
FIELDS = ["program", "kind", "allocator", "outcome", "signal", "exit_status", "seconds", "message"]


@dataclass(frozen=True)
class Program:
    name: str    # misuse_double_free_small
    kind: str    # "misuse" or "correct"
    what: str    # its source's first comment line

    def path(self) -> Path:
        return build_dir() / "tests" / "misuse" / self.name


def programs(kind: str = None) -> list:
    """The suite, from its sources (misuse programs first), optionally of one kind."""
    found = []
    for source in sorted(SOURCES.glob("*_*.c*")):
        prefix = source.stem.split("_", 1)[0]
        if prefix in ("misuse", "correct") and source.suffix in (".c", ".cpp"):
            first = source.read_text().splitlines()[0]
            found.append(Program(source.stem, prefix, first.lstrip("/ ").strip()))
    found.sort(key=lambda p: (p.kind != "misuse", p.name))
    return [p for p in found if kind is None or p.kind == kind]


def check_built(suite: list) -> None:
    missing = [p.name for p in suite if not p.path().is_file()]
    if missing:
        raise LabError(f"the misuse suite is not built ({build_dir() / 'tests' / 'misuse'}: no "
                       f"{', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}): run `make build`")


def outcome(kind: str, returncode, timed_out: bool = False) -> str:
    """What a program's end means (returncode < 0: killed by that signal)."""
    if timed_out:
        return TIMEOUT
    if returncode is not None and returncode < 0 and -returncode in CAUGHT_SIGNALS:
        return CAUGHT if kind == "misuse" else FAILED
    if returncode == 0:
        return MISSED if kind == "misuse" else CLEAN
    if kind == "misuse" and returncode == NOT_APPLICABLE_EXIT:
        return NOT_APPLICABLE
    return FAILED


def _no_core() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _status_text(returncode) -> tuple:
    """(signal name or "", exit status text)."""
    if returncode is None:
        return "", "killed after the timeout"
    if returncode < 0:
        name = signal.Signals(-returncode).name
        return name, f"killed by {name}"
    return "", f"exited with status {returncode}"


def run(program: Program, allocator: allocators.Allocator, timeout_s: float = TIMEOUT_S, extra_env: dict = None
        ) -> dict:
    """One program under LD_PRELOAD of one allocator: a row of FIELDS. extra_env: settings on top (glibc's own
    checks switched on, in the tests)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    if allocator.preload():
        env["LD_PRELOAD"] = ":".join(allocator.preload())
    env.update(extra_env or {})
    start = time.monotonic()
    try:
        done = subprocess.run([str(program.path())], env=env, capture_output=True, text=True, errors="replace",
                              timeout=timeout_s, preexec_fn=_no_core, stdin=subprocess.DEVNULL)
        returncode, stderr, timed_out = done.returncode, done.stderr, False
    except subprocess.TimeoutExpired as expired:
        stderr = expired.stderr.decode(errors="replace") if isinstance(expired.stderr, bytes) else expired.stderr
        returncode, timed_out = None, True
    name, status = _status_text(returncode)
    lines = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    return {"program": program.name, "kind": program.kind, "allocator": allocator.name,
            "outcome": outcome(program.kind, returncode, timed_out), "signal": name, "exit_status": status,
            "seconds": round(time.monotonic() - start, 4), "message": lines[-1][:200] if lines else ""}


def resolve_all(names: list) -> tuple:
    """({name: Allocator} of those present, {name: why missing, with how to get it})."""
    present, skipped = {}, {}
    for name in names:
        try:
            present[name] = allocators.resolve(name)
        except LabError as error:
            skipped[name] = str(error)
    return present, skipped


def run_suite(names: list, timeout_s: float = TIMEOUT_S, suite: list = None) -> tuple:
    """Every program on every present allocator: (rows, skipped allocators)."""
    suite = programs() if suite is None else suite
    check_built(suite)
    present, skipped = resolve_all(names)
    rows = [run(p, a, timeout_s) for a in present.values() for p in suite]
    return rows, skipped


# ---------------------------------------------------------------------------
# The table.

def tally(rows: list) -> dict:
    """allocator -> counts: caught, misuse (applicable ones), n/a, clean, correct."""
    counts = {}
    for row in rows:
        c = counts.setdefault(row["allocator"], {CAUGHT: 0, "misuse": 0, NOT_APPLICABLE: 0, CLEAN: 0, "correct": 0})
        if row["kind"] == "correct":
            c["correct"] += 1
            c[CLEAN] += row["outcome"] == CLEAN
        elif row["outcome"] == NOT_APPLICABLE:
            c[NOT_APPLICABLE] += 1
        else:
            c["misuse"] += 1
            c[CAUGHT] += row["outcome"] == CAUGHT
    return counts


def summary_rows(rows: list) -> list:
    """[allocator, "caught k/n", "n/a", "clean m/N"] per allocator, in the rows' order."""
    return [[name, f"{c[CAUGHT]}/{c['misuse']}", str(c[NOT_APPLICABLE]), f"{c[CLEAN]}/{c['correct']}"]
            for name, c in tally(rows).items()]


SUMMARY_HEADER = ["allocator", "misuse caught", "not applicable", "correct programs clean"]


def cell_text(row: dict) -> str:
    if row["outcome"] == CAUGHT:
        return row["signal"]
    if row["outcome"] in (MISSED, CLEAN):
        return "—" if row["outcome"] == MISSED else "clean"
    return row["outcome"] if row["outcome"] != FAILED else f"failed ({row['exit_status']})"


def detail_rows(rows: list, kind: str) -> tuple:
    """(header, rows): one row per program of that kind, one column per allocator."""
    names = list(dict.fromkeys(r["allocator"] for r in rows))
    by = {(r["program"], r["allocator"]): r for r in rows if r["kind"] == kind}
    table = []
    for program in dict.fromkeys(r["program"] for r in rows if r["kind"] == kind):
        table.append([program.split("_", 1)[1]] + [cell_text(by[(program, a)]) if (program, a) in by else "-"
                                                   for a in names])
    return ["program"] + names, table


def markdown(header: list, rows: list) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def command(args) -> int:
    """strata-lab misuse [--alloc A ...]: the detection table on stdout (Markdown)."""
    names = args.allocs or DEFAULT_ALLOCATORS
    rows, skipped = run_suite(names, args.timeout)
    if not rows:
        raise LabError("no allocator to run the misuse suite on: " + "; ".join(skipped.values()))
    print(markdown(SUMMARY_HEADER, summary_rows(rows)))
    for kind in ("misuse", "correct"):
        print()
        print(markdown(*detail_rows(rows, kind)))
    print("\ncaught: stopped by SIGABRT, SIGSEGV, SIGBUS, SIGILL or SIGTRAP; —: ran on, exit 0 (docs/lab.md, "
          "\"Hardening\")")
    for why in skipped.values():
        print(f"skipped: {why}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------
# In the evaluation: the suite on the allocators of the hardening section.

SECTION = "hardening"


def evaluation_steps(config, available: dict) -> list:
    """(program, allocator) steps for the hardening experiments' allocators that are present; none without one.
    A suite that is not built is a LabError before anything runs."""
    names = []
    for experiment in config.experiments:
        if experiment.section == SECTION:
            names += [a for a in experiment.allocators if a in available and a not in names]
    if not names:
        return []
    suite = programs()
    check_built(suite)
    return [(program, name) for name in names for program in suite]


def evaluation_row(step: tuple, available: dict, timeout_s: float) -> dict:
    """One step's row; status "ok" unless Ctrl-C stopped the program (not a result then)."""
    program, name = step
    library = available[name]
    row = run(program, allocators.Allocator(name, Path(library) if library else None), min(timeout_s, TIMEOUT_S))
    row["status"] = "interrupted" if row["signal"] == "SIGINT" else "ok"
    return row
