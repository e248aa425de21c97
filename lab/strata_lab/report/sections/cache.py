"""Cache misses and time (2026 Fig. 3), from the cachegrind runs of
`strata-lab evaluate --cachegrind`: simulated D1 and LL misses (this machine
has no hardware counters) against each cell's median time."""
from ... import stats
from ...claims import Above, Claim, Source
from .. import plots
from ..results import Results, Section


def correlation_claims(r: Results, s: Section) -> None:
    rows = [v for v in r.valgrind if v["tool"] == "cachegrind" and v["status"] == "ok"]
    points = {}   # "workload mode" -> [(D1, LL, median time)]
    for v in rows:
        cell = r.cells.get((v["workload"], v["mode"], v["scale"], v["allocator"], v["preset"]))
        if cell is not None and cell.time is not None:
            points.setdefault(f"{v['workload']} {v['mode']}", []).append(
                (v["d1_misses"], v["ll_misses"], cell.time.median))
    claim = Claim("resilience.misses-correlate", s.title,
                  "cache misses rise with execution time across allocators and presets",
                  Source("2026", "Fig. 3", "These two examples, covering L1 misses in Clang and L3 misses in "
                                           "197.parser under a fixed adversarial allocation multiplier of 10, "
                                           "highlight the correlation between cache misses (poor locality) and "
                                           "increased execution time."),
                  "per workload and mode: Pearson r of LL misses and median time over its cells", Above(0.0),
                  "correlated (no figure)")
    if points:
        s.p("Cache misses (Figure 3): one cachegrind run per cell (deterministic), against the cell's median "
            "time. Pearson r with its 95% interval (Fisher z).")
        table = []
        confidence = stats.corrected(stats.CONFIDENCE, len(points))
        for label, xs in points.items():
            d1 = stats.correlation([p[0] for p in xs], [p[2] for p in xs])
            ll = stats.correlation([p[1] for p in xs], [p[2] for p in xs], confidence)
            claim.estimates[label] = ll
            table.append([label, str(len(xs)), "—" if d1 is None else d1.text(2), "—" if ll is None else ll.text(2)])
        s.img(plots.scatter(r.plot_path("cache-ll"), "LL misses against median time", "LL misses (cachegrind)",
                            "median time (s)", {k: [(p[1], p[2]) for p in v] for k, v in points.items()}),
              "LL misses and time")
        s.table(["workload, mode", "cells", "r (D1 misses, time)", "r (LL misses, time)"], table)
        claim.every = len(points) > 1
    elif r.meta.get("cachegrind"):
        s.p("Cache misses: no successful cachegrind run.")
    s.claim(claim)
