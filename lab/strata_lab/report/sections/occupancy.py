"""The occupancy sweep (2026 §3.2, Fig. 3): one program on one allocator,
the preconditioning multiplier fixed at 10 and its occupancy swept; time,
and cache misses (cachegrind_sections), against occupancy."""
from ... import intervals, precondition
from ...claims import Above, Claim, Source
from .. import plots
from ..results import Results, Section, estimate, seconds, summary_of

QUOTE = ("As occupancy increases, fewer contiguous object slots remain available to the allocator during execution. "
         "In turn, cache misses increase at every level, degrading performance.")


def build(r: Results) -> Section:
    s = Section("occupancy", "Occupancy sweep at a fixed multiplier (2026 Fig. 3)")
    s.p("As in Figure 3: one program (naive mode) on one allocator, preconditioned with the multiplier fixed at 10 "
        "(ten times its peak live objects allocated, shuffled and freed) and the fraction kept live (occupancy) "
        "swept. Time against the sweep's lowest occupancy, paired within a round (95% interval); cache misses "
        f"from one cachegrind run per preset, at {r.meta.get('cachegrind_scale', 1)} of the cell's scale. "
        + r.timing.why)
    time_claim = Claim("occupancy.time-rises", s.title,
                       "at a fixed multiplier, the highest occupancy runs slower than the lowest",
                       Source("2026", "§3.2", QUOTE),
                       f"per sweep: {r.timing.name} at the highest occupancy / at the lowest (M = 10)", Above(1.0),
                       "rising with occupancy (no figure; 197.parser and Clang on jemalloc)",
                       why="the stand-in's peak live objects, which size the preconditioning, are fewer than "
                           "197.parser's (2002 Table 3: the Statistics section), so its heap's holes stay in cache")
    misses_claim = Claim("occupancy.misses-rise", s.title,
                         "at a fixed multiplier, the highest occupancy has more last-level cache misses than the "
                         "lowest", Source("2026", "§3.2", QUOTE),
                         "per sweep: LL misses at the highest occupancy / at the lowest (cachegrind: deterministic)",
                         Above(1.0), "rising with occupancy (no figure)",
                         why="cachegrind runs at a reduced scale on a small simulated cache; a small preconditioned "
                             "heap fits in it at every occupancy")
    sweeps = [(e, w, m, a) for e in r.experiments("occupancy") for w in e["workloads"] for m in e["modes"]
              for a in e["allocators"]]
    confidence = intervals.corrected(intervals.CONFIDENCE, len(sweeps))
    for e, w, mode, alloc in sweeps:
        _sweep(r, s, (e, w, mode, alloc), time_claim, misses_claim, confidence)
    for claim in (time_claim, misses_claim):
        claim.every = len(claim.estimates) > 1
        s.claim(claim)
    from .cache import correlation_claims
    correlation_claims(r, s)
    return s


def sweep_presets(presets: list) -> list:
    """The presets of one multiplier (the most common one among them), by rising occupancy."""
    known = [precondition.PRESETS[p] for p in presets if p in precondition.PRESETS]
    multipliers = [p.multiplier for p in known if p.multiplier > 0]
    if not multipliers:
        return []
    fixed = max(set(multipliers), key=multipliers.count)
    return sorted((p for p in known if p.multiplier == fixed), key=lambda p: p.occupancy)


def _misses(r: Results, key: tuple):
    return next((v for v in r.valgrind if v["tool"] == "cachegrind" and v["status"] == "ok"
                 and (v["workload"], v["mode"], v["scale"], v["allocator"], v["preset"]) == key), None)


def _sweep(r: Results, s: Section, sweep: tuple, time_claim: Claim, misses_claim: Claim, confidence: float) -> None:
    e, w, mode, alloc = sweep
    points = [p for p in sweep_presets(e["presets"]) if r.key(e, w, mode, alloc, p.name) in r.cells]
    if len(points) < 2:
        return
    label = f"{w} {mode} on {alloc}"
    keys = [r.key(e, w, mode, alloc, p.name) for p in points]
    base = keys[0]
    values, rows = {}, []
    for p, key in zip(points, keys):
        q = intervals.ratio(r.ratios(key, base))
        values[(f"{p.occupancy:.0%}", "time / lowest occupancy")] = summary_of(q)
        cg = _misses(r, key)
        rows.append([p.name, f"{p.multiplier:g}", f"{p.occupancy:.0%}", seconds(r.cells[key].time), estimate(q),
                     "—" if cg is None else f"{cg['d1_misses']:,}", "—" if cg is None else f"{cg['ll_misses']:,}"])
    s.img(plots.bars(r.plot_path(f"occupancy-{w}-{mode}-{alloc}"), f"{label}: time against occupancy "
                     f"(multiplier {points[0].multiplier:g})", "time / time at the lowest occupancy",
                     [f"{p.occupancy:.0%}" for p in points], ["time / lowest occupancy"], values, 1.0),
          f"{label}: occupancy sweep (whiskers: 95% interval)")
    s.table(["preset", "multiplier", "occupancy", "time", "time / lowest occupancy (95% CI)", "D1 misses",
             "LL misses"], rows)
    time_claim.cells.update({keys[-1], base})
    time_claim.estimates[label] = intervals.ratio(r.ratios(keys[-1], base), confidence)
    low, high = _misses(r, base), _misses(r, keys[-1])
    if low and high and low["ll_misses"]:
        misses_claim.estimates[label] = intervals.exact(high["ll_misses"] / low["ll_misses"])
