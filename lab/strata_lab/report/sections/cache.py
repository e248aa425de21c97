"""Cache misses and time on the 2026 paper's Fig. 3 design: an occupancy
sweep at a fixed multiplier on one allocator (the occupancy section's
cells), from their cachegrind runs (cachegrind_sections): simulated misses
(this machine has no hardware counters) against each cell's median time."""
from ... import intervals
from ...claims import Above, Claim, Source
from .. import plots
from ..results import Results, Section

QUOTE = ("These two examples, covering L1 misses in Clang and L3 misses in 197.parser under a fixed adversarial "
         "allocation multiplier of 10, highlight the correlation between cache misses (poor locality) and increased "
         "execution time.")


def sweep_points(r: Results) -> dict:
    """"workload mode on allocator" -> [(D1 misses, LL misses, median time)], one point per preset of a sweep."""
    misses = {(v["workload"], v["mode"], v["scale"], v["allocator"], v["preset"]): v for v in r.valgrind
              if v["tool"] == "cachegrind" and v["status"] == "ok"}
    points = {}
    for e in r.experiments("occupancy"):
        for w in e["workloads"]:
            for mode in e["modes"]:
                for alloc in e["allocators"]:
                    for preset in e["presets"]:
                        key = r.key(e, w, mode, alloc, preset)
                        cell, v = r.cells.get(key), misses.get(key)
                        if cell is not None and cell.time is not None and v is not None:
                            points.setdefault(f"{w} {mode} on {alloc}", []).append(
                                (v["d1_misses"], v["ll_misses"], cell.time.median))
    return points


def correlation_claims(r: Results, s: Section) -> None:
    claim = Claim("occupancy.misses-correlate", s.title,
                  "along an occupancy sweep, cache misses rise with execution time",
                  Source("2026", "Fig. 3", QUOTE),
                  f"per sweep: Pearson r of LL misses and median {r.timing.name} over its presets", Above(0.0),
                  "correlated (no figure)",
                  why="with few presets and noisy times on a shared machine, a correlation needs a large effect to "
                      "show; the stand-in's small heap gives a small one")
    points = sweep_points(r)
    if points:
        s.p("Cache misses and time (Figure 3): one cachegrind run per preset of the sweep (deterministic), against "
            "the preset's median time. Pearson r with its 95% interval (Fisher z).")
        table = []
        confidence = intervals.corrected(intervals.CONFIDENCE, len(points))
        for label, xs in points.items():
            d1 = intervals.correlation([p[0] for p in xs], [p[2] for p in xs])
            ll = intervals.correlation([p[1] for p in xs], [p[2] for p in xs], confidence)
            claim.estimates[label] = ll
            table.append([label, str(len(xs)), "—" if d1 is None else d1.text(2), "—" if ll is None else ll.text(2)])
        s.img(plots.scatter(r.plot_path("cache-ll"), "LL misses against median time", "LL misses (cachegrind)",
                            "median time (s)", {k: [(p[1], p[2]) for p in v] for k, v in points.items()}),
              "LL misses and time")
        s.table(["sweep", "presets", "r (D1 misses, time)", "r (LL misses, time)"], table)
        claim.every = len(points) > 1
    s.claim(claim)
