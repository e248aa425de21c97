"""Running a program under a Valgrind tool (callgrind, cachegrind) and
reading the totals it writes: instruction counts and simulated cache misses,
deterministic where time is not."""
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional, Sequence

from .errors import LabError


def totals(out_file: Path) -> dict:
    """event -> total of a callgrind or cachegrind output file (Ir, D1mr, ...)."""
    events, counts = None, None
    for line in Path(out_file).read_text().splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:") or line.startswith("totals:"):
            counts = [int(x) for x in line.split()[1:]]
    if not events or not counts:
        raise LabError(f"{out_file}: no events/summary line")
    return dict(zip(events, counts))


def require(what: str) -> None:
    """A LabError before anything runs when valgrind is not installed."""
    if shutil.which("valgrind") is None:
        raise LabError(f"{what} needs valgrind (apt-get install valgrind)")


def measure(tool: str, argv: Sequence[str], env: dict, out_file: Optional[Path] = None,
            options: Sequence[str] = (), cwd: Optional[str] = None, timeout_s: Optional[float] = None) -> dict:
    """Runs argv under valgrind --tool=TOOL and returns the totals; out_file
    keeps the profile (else it goes to a temporary file). A run that fails is
    a LabError with the tail of valgrind's messages."""
    with tempfile.TemporaryDirectory(prefix="strata-valgrind.") as scratch:
        out = Path(out_file) if out_file else Path(scratch) / f"{tool}.out"
        command = ["valgrind", f"--tool={tool}", f"--{tool}-out-file={out}", *options, *argv]
        done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout_s)
        if done.returncode != 0:
            raise LabError(f"{tool}: {' '.join(map(str, argv))} exited with {done.returncode}\n"
                           f"{done.stderr.strip()[-2000:]}")
        return totals(out)


def instructions(argv: Sequence[str], env: dict, out_file: Optional[Path] = None, **kwargs) -> int:
    """Instructions executed by the whole process (callgrind's Ir)."""
    return measure("callgrind", argv, env, out_file, **kwargs)["Ir"]


def cache_misses(argv: Sequence[str], env: dict, out_file: Optional[Path] = None, **kwargs) -> dict:
    """{"Ir", "D1", "LL"}: instructions and simulated first-level data and
    last-level misses (reads + writes) of cachegrind's model of this machine."""
    counts = measure("cachegrind", argv, env, out_file, options=["--cache-sim=yes"], **kwargs)
    return {"Ir": counts["Ir"], "D1": counts["D1mr"] + counts["D1mw"], "LL": counts["DLmr"] + counts["DLmw"]}


def _resolve(table: dict, kind: str, spec: str) -> str:
    """A name of a callgrind file, which compresses repeats: "(7) malloc" defines
    id 7 of its kind (ob, fl, fn), "(7)" refers to it; a plain name is itself."""
    compressed = re.match(r"\((\d+)\)(?: (.*))?$", spec)
    if not compressed:
        return spec
    ident, name = compressed.groups()
    if name is not None:
        table[(kind, ident)] = name
    return table[(kind, ident)]


def calls_into(out_file: Path, library: str) -> dict:
    """callee -> (calls, inclusive Ir) of every call from outside the object
    file `library` (a path or a part of it) to a function inside it, from a
    callgrind output file: what the program spent in that library, entry
    point by entry point (e.g. malloc and free of a preloaded allocator)."""
    names, arcs = {}, {}
    ob = callee_ob = callee = None
    positions = 1  # columns before the costs: "line", or "instr line" with --dump-instr=yes
    lines = Path(out_file).read_text().splitlines()
    for at, line in enumerate(lines):
        key, _, value = line.partition("=")
        if line.startswith("positions:"):
            positions = len(line.split()) - 1
        elif key == "ob":
            ob = _resolve(names, "ob", value)
        elif key == "fn":
            _resolve(names, "fn", value)
            callee_ob = None
        elif key == "cob":
            callee_ob = _resolve(names, "ob", value)
        elif key == "cfn":
            callee = _resolve(names, "fn", value)
        elif key == "calls":
            # The object of the callee defaults to the caller's; the line after
            # "calls" is the call's position and its inclusive cost.
            target = callee_ob or ob
            if library in target and library not in ob:
                count, cost = arcs.get(callee, (0, 0))
                arcs[callee] = (count + int(value.split()[0]), cost + int(lines[at + 1].split()[positions]))
            callee_ob = None
    return arcs
