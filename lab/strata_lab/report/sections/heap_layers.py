"""Heap layers at zero cost (2001 §6): the layer-built Kingsley and Lea heaps
against hand-written allocators, and on the workloads."""
from ... import stats
from ...claims import Below, Claim, Source
from .. import plots
from ..results import Results, Section, against_glibc, estimate, seconds, summarize, summary_of

# (layers, hand-written, criterion, the paper's sentence, its figure). The paper compares runtime, and so does
# the verdict (callgrind's instructions are shown beside it: they can disagree with time, e.g. through cache
# misses). "Between 1/2% faster and 20% slower" is a claim about cost: at most 20% slower.
PAIRS = [("kingsley-layers", "kingsley-monolithic", Below(1.02),
          "The average increase in runtime for KingsleyHeap over the Kingsley allocator is just below 2%.",
          "just below 2%"),
         ("lea-layers", "glibc", Below(1.20),
          "Runtime of LeaHeap is between 1/2% faster and 20% slower than the Lea allocator (an average of 7% "
          "slower).", "0.5% faster to 20% slower")]


def build(r: Results) -> Section:
    s = Section("heap-layers", "Heap layers: zero cost (2001 §6)")
    s.p("`bench/layers` (`bench_zero_cost`): the same allocation loop on KingsleyHeap and LeaHeap composed from "
        "strata's layers, a hand-written monolithic Kingsley allocator, glibc (the Lea allocator's descendant) and "
        "a bump pointer (the loop alone). Time ratios paired within a round (95% interval); instructions from "
        "callgrind (deterministic).")
    rounds = {}
    for b in r.bench:
        if b["bench"] == "zero-cost" and b["status"] == "ok":
            rounds.setdefault(b["round"], {})[b["contender"]] = b["seconds"]
    instructions = {b["contender"]: b["instructions"] for b in r.bench
                    if b["bench"] == "zero-cost-callgrind" and b["status"] == "ok"}
    if rounds:
        contenders = sorted({c for v in rounds.values() for c in v})
        s.table(["contender", "time"], [[c, seconds(summarize(v.get(c) for v in rounds.values()))]
                                        for c in contenders])
    values, table = {}, []
    for layers, hand, criterion, quote, figure in PAIRS:
        time = stats.ratio([v[layers] / v[hand] for v in rounds.values() if layers in v and v.get(hand)])
        count = instructions[layers] / instructions[hand] if layers in instructions and instructions.get(hand) else None
        values[(f"{layers} / {hand}", "time")] = summary_of(time)
        if count is not None:
            values[(f"{layers} / {hand}", "instructions")] = summary_of(stats.exact(count))
        if time is not None or count is not None:
            table.append([f"{layers} / {hand}", estimate(time), "—" if count is None else f"{count:.4f}"])
        claim = Claim(f"heap-layers.{layers}", s.title, f"{layers} costs at most what the paper measured over {hand}",
                      Source("2001", "§6", quote), f"{layers} / {hand}: time of bench_zero_cost, paired by round",
                      criterion, figure, estimates={"time": time})
        if count is not None:
            claim.note = f"callgrind instructions {count:.4f}"
        s.claim(claim)
    if values:
        s.img(plots.bars(r.plot_path("heap-layers-zero-cost"), "layers against hand-written", "ratio",
                         [f"{a} / {b}" for a, b, *_ in PAIRS], ["time", "instructions"],
                         {k: v for k, v in values.items() if v}, 1.0), "zero-cost ratios")
    s.table(["pair", "time ratio (paired, 95% CI)", "instruction ratio (callgrind)"], table)
    for e in r.experiments("heap-layers"):
        _workloads(r, s, e)
    return s


def _workloads(r: Results, s: Section, e: dict) -> None:
    values, table = against_glibc(r, e)
    if values:
        s.p("The layer-built allocators as LD_PRELOAD libraries on the workloads, normalised to glibc.")
        s.img(plots.bars(r.plot_path("heap-layers-workloads"), "time normalised to glibc", "normalised time",
                         e["workloads"], e["allocators"], values, 1.0), "layer-built allocators on workloads")
    s.table(["workload", "allocator", "time", "time / glibc (95% CI)", "peak RSS", "most pages in use",
             "fragmentation"], table)
