"""strata-lab bench layers: are heaps composed from layers as fast as
hand-written ones (the Heap Layers paper's zero-cost claim, §5 and §6)?

Pairs compared (numerator / denominator), each pair on one sequence:
  bench/layers/bench_zero_cost (§6, a general-purpose allocation loop):
    kingsley-layers / kingsley-monolithic   (paper: within ~2%; goal: 1% by instructions)
    lea-layers      / glibc                 (paper: within ~7% of the Lea allocator)
  bench/layers/bench_special (§5, the special-purpose allocators):
    xalloc-layers  / xalloc-hand    197.parser's stack-like sequence (paper: XallocHeap 1% faster)
    obstack-layers / obstack-gnu    gcc's parse phase on obstacks (paper: ObstackHeap 8% faster)

Time: every round runs each contender of a program once, in an order rotated
each round; each pair's ratio is taken within a round, and the median of those
ratios is reported with the median times.
Instructions: one run of each contender under callgrind (deterministic); in
bench_zero_cost the `bump` contender (a bump pointer whose free does nothing)
gives the workload's own instructions, subtracted to show the allocator's share."""
import os
from dataclasses import dataclass

from .. import valgrind
from . import common


@dataclass(frozen=True)
class Program:
    path: str          # relative to the build directory
    workload: str      # the name its rows carry
    title: str
    contenders: tuple
    pairs: tuple
    unit: str           # what its OPERATIONS argument counts
    baseline: str = ""  # the contender whose instructions are the workload alone ("" = none)


ZERO_COST = Program("bench/layers/bench_zero_cost", "zero-cost", "Zero-cost layers",
                    ("kingsley-layers", "kingsley-monolithic", "lea-layers", "glibc", "bump"),
                    (("kingsley-layers", "kingsley-monolithic"), ("lea-layers", "glibc")), "allocations",
                    baseline="bump")
SPECIAL = Program("bench/layers/bench_special", "special", "Special-purpose layers against the originals (§5)",
                  ("xalloc-layers", "xalloc-hand", "obstack-layers", "obstack-gnu"),
                  (("xalloc-layers", "xalloc-hand"), ("obstack-layers", "obstack-gnu")), "operations")
PROGRAMS = (ZERO_COST, SPECIAL)


def add_parser(sub) -> None:
    p = common.add_benchmark(sub, "layers", "the zero-cost claim: heaps from layers against hand-written ones",
                             __doc__, command)
    p.add_argument("--ops", type=int, default=4_000_000, help="allocations per timed run (default 4000000)")
    p.add_argument("--callgrind-ops", type=int, default=400_000,
                   help="allocations per callgrind run (default 400000)")
    p.add_argument("--no-callgrind", action="store_true", help="skip the instruction counts")


def seconds(exe, contender: str, ops: int) -> float:
    """The loop's CPU time (the process is single-threaded; a busy machine's waits for a CPU are left out)."""
    return float(common.fields(common.run([exe, contender, ops]).stdout)["cpu_seconds"])


def command(args) -> int:
    common.check_rounds(args.rounds)
    common.check_positive("--ops", args.ops)
    common.check_positive("--callgrind-ops", args.callgrind_ops)
    exes = {p.workload: common.program(p.path) for p in PROGRAMS}
    if not args.no_callgrind:
        valgrind.require("the instruction counts (or --no-callgrind)")
    for p in PROGRAMS:
        _timed(p, exes[p.workload], args)
        if not args.no_callgrind:
            _instructions(p, exes[p.workload], args.callgrind_ops)
    return 0


def _timed(p: Program, exe, args) -> None:
    runs = common.Measurements()
    for rnd, order in common.rotated_rounds(args.rounds, list(p.contenders)):
        for contender in order:
            runs.add(rnd, p.workload, contender, {"seconds": seconds(exe, contender, args.ops)})
    out = [f"## {p.title}: {args.rounds} interleaved rounds, {args.ops} {p.unit} each", ""]
    out += common.table(["contender", "median CPU time (s)"],
                        [[c, f"{runs.median(p.workload, c, 'seconds'):.4f}"] for c in p.contenders], "ll")
    out.append("")
    rows = []
    for a, b in p.pairs:
        ratio = runs.paired(p.workload, a, b, "seconds")
        rows.append([f"{a} / {b}", f"{ratio.median:.4f}", f"{ratio.low:.4f}", f"{ratio.high:.4f}"])
    out += common.table(["pair", "median of per-round CPU time ratios", "min", "max"], rows, "llll")
    common.emit(out)


def _instructions(p: Program, exe, ops: int) -> None:
    ins = {c: valgrind.instructions([str(exe), c, str(ops)], dict(os.environ)) for c in p.contenders}
    out = ["", f"## {p.title}: instructions (callgrind, {ops} {p.unit})", ""]
    if p.baseline:
        base = ins[p.baseline]
        out[1] += f"; `{p.baseline}` = workload alone"
        out += common.table(["contender", "instructions", "minus workload"],
                            [[c, f"{ins[c]:,}", f"{ins[c] - base:,}"] for c in p.contenders], "lll")
        out.append("")
        out += common.table(["pair", "total ratio", "allocator-only ratio"],
                            [[f"{a} / {b}", f"{ins[a] / ins[b]:.4f}", f"{(ins[a] - base) / max(1, ins[b] - base):.4f}"]
                             for a, b in p.pairs], "lll")
    else:
        out += common.table(["contender", "instructions"], [[c, f"{ins[c]:,}"] for c in p.contenders], "ll")
        out.append("")
        out += common.table(["pair", "ratio"], [[f"{a} / {b}", f"{ins[a] / ins[b]:.4f}"] for a, b in p.pairs], "ll")
    common.emit(out)
