"""strata-lab bench layers: are heaps composed from layers as fast as
hand-written ones (the Heap Layers paper's zero-cost claim)?

Pairs compared (numerator / denominator):
  kingsley-layers / kingsley-monolithic   (paper: within ~2%; goal: 1% by instructions)
  lea-layers      / glibc                 (paper: within ~7% of the Lea allocator)

Time: every round runs each contender of bench/layers/bench_zero_cost once,
in an order rotated each round; each pair's ratio is taken within a round,
and the median of those ratios is reported with the median times.
Instructions: one run of each contender under callgrind (deterministic); the
`bump` contender (a bump pointer whose free does nothing) gives the
workload's own instructions, subtracted to show the allocator's share."""
import os

from .. import valgrind
from . import common

CONTENDERS = ["kingsley-layers", "kingsley-monolithic", "lea-layers", "glibc", "bump"]
PAIRS = [("kingsley-layers", "kingsley-monolithic"), ("lea-layers", "glibc")]
PROGRAM = "bench/layers/bench_zero_cost"
WORKLOAD = "zero-cost"


def add_parser(sub) -> None:
    p = common.add_benchmark(sub, "layers", "the zero-cost claim: heaps from layers against hand-written ones",
                             __doc__, command)
    p.add_argument("--ops", type=int, default=4_000_000, help="allocations per timed run (default 4000000)")
    p.add_argument("--callgrind-ops", type=int, default=400_000,
                   help="allocations per callgrind run (default 400000)")
    p.add_argument("--no-callgrind", action="store_true", help="skip the instruction counts")


def seconds(exe, contender: str, ops: int) -> float:
    return float(common.fields(common.run([exe, contender, ops]).stdout)["seconds"])


def command(args) -> int:
    common.check_rounds(args.rounds)
    common.check_positive("--ops", args.ops)
    common.check_positive("--callgrind-ops", args.callgrind_ops)
    exe = common.program(PROGRAM)
    if not args.no_callgrind:
        valgrind.require("the instruction counts (or --no-callgrind)")

    runs = common.Measurements()
    for rnd, order in common.rotated_rounds(args.rounds, CONTENDERS):
        for contender in order:
            runs.add(rnd, WORKLOAD, contender, {"seconds": seconds(exe, contender, args.ops)})
    out = [f"## Zero-cost layers: {args.rounds} interleaved rounds, {args.ops} allocations each", ""]
    out += common.table(["contender", "median time (s)"],
                        [[c, f"{runs.median(WORKLOAD, c, 'seconds'):.4f}"] for c in CONTENDERS], "ll")
    out.append("")
    rows = []
    for a, b in PAIRS:
        ratio = runs.paired(WORKLOAD, a, b, "seconds")
        rows.append([f"{a} / {b}", f"{ratio.median:.4f}", f"{ratio.low:.4f}", f"{ratio.high:.4f}"])
    out += common.table(["pair", "median of per-round time ratios", "min", "max"], rows, "llll")
    common.emit(out)
    if args.no_callgrind:
        return 0

    env = dict(os.environ)
    ins = {c: valgrind.instructions([str(exe), c, str(args.callgrind_ops)], env) for c in CONTENDERS}
    base = ins["bump"]
    out = ["", f"## Instructions (callgrind, {args.callgrind_ops} allocations; `bump` = workload alone)", ""]
    out += common.table(["contender", "instructions", "minus workload"],
                        [[c, f"{ins[c]:,}", f"{ins[c] - base:,}"] for c in CONTENDERS], "lll")
    out.append("")
    out += common.table(["pair", "total ratio", "allocator-only ratio"],
                        [[f"{a} / {b}", f"{ins[a] / ins[b]:.4f}", f"{(ins[a] - base) / max(1, ins[b] - base):.4f}"]
                         for a, b in PAIRS], "lll")
    common.emit(out)
    return 0
