"""General-purpose allocators on naive programs (Vam §4.1–4.4, Fig. 2, 3
and 6): time, fragmentation and cache misses."""
from ... import intervals
from ...claims import Above, Below, Claim, Source, effect
from .. import plots
from .statistics import rate_why
from ..results import Results, Section, against_glibc, estimate, summary_of

# The allocators the Vam paper compared, by their counterparts here: DLmalloc (glibc, its descendant) and Vam
# (libstrata). PHKmalloc and PHK_sc have none (the layers' Lea heap is DLmalloc's design, not another allocator).
VAM, DLMALLOC = "strata", "glibc"
PAPER_THREE = ("glibc", "jemalloc")   # 2026 §4.4: the allocators mimalloc was compared with


def build(r: Results) -> Section:
    s = Section("general-purpose", "General-purpose allocators (Vam Fig. 2, 3 and 6)")
    s.p("Naive mode (every object through malloc/free) on each allocator. Time normalised to glibc (the paper "
        "normalises to DLmalloc, glibc's ancestor), paired within a round (95% interval). " + r.timing.why +
        " Fragmentation as in Vam "
        "§4.4: the most pages in use (mapped, touched, not discarded) over the most live bytes, both measured at "
        "the moments they happen in separate memory runs (every requested byte touched, so that a live byte is a "
        "byte in use).")
    e = next(iter(r.experiments("general-purpose")), None)
    if e is not None:
        _tables(r, s, e)
    mode = e["modes"][0] if e else "naive"
    workloads = e["workloads"] if e else []
    key = lambda w, a: r.key(e, w, mode, a, "Adv0")
    faster = Claim("general-purpose.vam-faster", s.title, "libstrata (Vam's design) is faster than glibc on average",
                   Source("Vam 2005", "§4.1", "On average, Vam is 4% and 8% faster than PHKmalloc and DLmalloc, "
                                              "respectively."),
                   f"geometric mean over workloads of libstrata / glibc {r.timing.name}",
                   Below(effect(-0.08), strict=True), "8% faster (margin: half of it, claims.effect)",
                   paper_value=0.92, why=rate_why(r, workloads, "and glibc's malloc has gained per-thread caches since DLmalloc 2.7"))
    if e is not None and {VAM, DLMALLOC} <= set(e["allocators"]):
        faster.cells.update(key(w, a) for w in workloads for a in (VAM, DLMALLOC))
        faster.estimates[VAM] = intervals.geometric_mean_across([r.ratios(key(w, VAM), key(w, DLMALLOC))
                                                             for w in workloads])
    s.claim(faster)
    most = Claim("general-purpose.dlmalloc-fragments-most", s.title,
                 "glibc (DLmalloc) fragments more than libstrata (Vam) on average; PHKmalloc and PHK_sc, the paper's "
                 "other two, have no counterpart here",
                 Source("Vam 2005", "§4.4", "We were surprised to see that DLmalloc, an allocator known for low "
                                            "fragmentation, in fact leads to the highest fragmentation on average."),
                 "geometric mean over workloads of glibc's fragmentation / libstrata's (memory runs, same round)",
                 Above(1.0), "highest on average",
                 why="§4.4's main cause, free pages DLmalloc cannot discard, needs a program whose live data "
                     "shrinks, which the general-purpose stand-ins rarely do (see the fragmentation table)")
    if e is not None and {DLMALLOC, VAM} <= set(e["allocators"]):
        most.cells.update(key(w, a) for w in workloads for a in (VAM, DLMALLOC))
        most.estimates[f"glibc / {VAM}"] = intervals.geometric_mean_across(
            [r.memory_ratios(key(w, DLMALLOC), key(w, VAM)) for w in workloads])
    s.claim(most)
    _mimalloc_best(r, s, e)
    _misses_claim(r, s, e)
    return s


def _mimalloc_best(r: Results, s: Section, e) -> None:
    """2026 §4.4 compared glibc, jemalloc and mimalloc; the table adds every other allocator of the section."""
    claim = Claim("general-purpose.mimalloc-best", s.title,
                  "mimalloc is faster than glibc and jemalloc on average over the programs",
                  Source("2026", "§4.4", "Among the three tested general-purpose allocators, mimalloc provides the "
                                         "best overall performance on our selection of benchmarks."),
                  f"geometric mean over workloads of mimalloc / glibc and mimalloc / jemalloc {r.timing.name} (the "
                  "paper's three), paired within a round", Below(1.0, strict=True), "the best of the three",
                  why="the evaluation's programs are stand-ins and general-purpose workloads, not the paper's "
                      "benchmarks; the margins between the three are a few percent")
    if e is None or "mimalloc" not in e["allocators"]:
        s.claim(claim)
        return
    key = lambda w, a: r.key(e, w, e["modes"][0], a, "Adv0")
    others = [a for a in e["allocators"] if a != "mimalloc"]
    judged = [a for a in PAPER_THREE if a in others]
    confidence = intervals.corrected(intervals.CONFIDENCE, len(judged))
    rows = []
    for other in others:
        groups = [r.ratios(key(w, "mimalloc"), key(w, other)) for w in e["workloads"]]
        q = intervals.geometric_mean_across(groups, confidence if other in judged else intervals.CONFIDENCE)
        rows.append([other, estimate(q), "judged" if other in judged else "shown"])
        if other in judged:
            claim.cells.update(key(w, a) for w in e["workloads"] for a in ("mimalloc", other))
            claim.estimates[f"mimalloc / {other}"] = q
    claim.every = len(judged) > 1
    s.p("mimalloc against each allocator: geometric mean over the workloads of time ratios paired within a round.")
    s.table(["against", "mimalloc / it (95% CI)", "in the claim"], rows)
    s.claim(claim)


def _tables(r: Results, s: Section, e: dict) -> None:
    values, rows = against_glibc(r, e)
    frag_values = {(w, a): r.fragmentation_of(r.key(e, w, e["modes"][0], a, "Adv0"))
                   for w in e["workloads"] for a in e["allocators"]}
    if values:
        s.img(plots.bars(r.plot_path("gp-time"), "time normalised to glibc (Vam Fig. 2)", "normalised time",
                         e["workloads"], e["allocators"], values, 1.0), "time (whiskers: 95% interval)")
    if any(frag_values.values()):
        s.img(plots.bars(r.plot_path("gp-fragmentation"), "fragmentation: most pages in use / most live bytes "
                         "(Vam Fig. 6)", "fragmentation", e["workloads"], e["allocators"],
                         {k: v for k, v in frag_values.items() if v}, 1.0), "fragmentation (whiskers: min–max)")
    s.table(["workload", "allocator", "time", "time / glibc (95% CI)", "peak RSS", "most pages in use",
             "fragmentation"], rows)


def _misses_claim(r: Results, s: Section, e) -> None:
    """Vam Fig. 3: D1 and last-level misses of each allocator, normalised to glibc (DLmalloc's descendant)."""
    l2 = Claim("general-purpose.vam-fewer-l2-misses", s.title,
               "libstrata has fewer last-level cache misses than glibc on average",
               Source("Vam 2005", "§4.2", "On average, Vam reduces L2 cache misses by 39% over DLmalloc."),
               "geometric mean over workloads of LL misses, libstrata / glibc (cachegrind: deterministic)",
               Below(effect(-0.39), strict=True), "39% fewer (margin: half of it, claims.effect)",
               paper_value=0.61, why="cachegrind simulates a small last-level cache at a reduced scale; the stand-ins' working sets "
                   "are smaller than the SPEC programs' (see the Calibration section), so fewer misses separate "
                   "the allocators")
    l1 = Claim("general-purpose.vam-fewer-l1-misses", s.title,
               "libstrata has fewer L1 data-cache misses than glibc on at least half of the workloads",
               Source("Vam 2005", "§4.2", "Vam reduces L1 cache misses for two of the four benchmarks."),
               "per workload: D1 misses, libstrata / glibc (cachegrind: deterministic)",
               Below(1.0, strict=True), "2 of 4 benchmarks",
               why="the stand-ins' sizes and lifetimes, not SPEC's, decide which allocator packs their objects "
                   "closer")
    l1.at_least = 0.5
    by = {(v["workload"], v["allocator"]): v for v in r.valgrind
          if e is not None and v["tool"] == "cachegrind" and v["status"] == "ok" and v["preset"] == "Adv0"
          and v["mode"] == e["modes"][0] and v["workload"] in e["workloads"]}
    rows, values, ratios = [], {}, []
    for (w, alloc), v in sorted(by.items()):
        base = by.get((w, DLMALLOC))
        if not (base and base["ll_misses"] and base["d1_misses"]):
            continue
        d1, ll = v["d1_misses"] / base["d1_misses"], v["ll_misses"] / base["ll_misses"]
        rows.append([w, alloc, *(f"{v[k]:,}" if v.get(k) is not None else "—"
                                 for k in ("instructions", "d1_misses", "ll_misses")), f"{d1:.3f}", f"{ll:.3f}"])
        values[(f"{w} D1", alloc)], values[(f"{w} LL", alloc)] = summary_of(intervals.exact(d1)), summary_of(intervals.exact(ll))
        if alloc == VAM:
            ratios.append(ll)
            l1.estimates[w] = intervals.exact(d1)
    if rows:
        s.p(f"Cache misses (Vam Fig. 3): one cachegrind run per cell at {r.meta.get('cachegrind_scale', 1)} of its "
            f"scale, simulating {' '.join(r.meta.get('cachegrind_options') or ['cachegrind’s default caches'])} "
            "(the Vam paper's Pentium 4 in the default config). Deterministic: exact ratios to glibc.")
        groups = [f"{w} {level}" for w in e["workloads"] for level in ("D1", "LL")]
        s.img(plots.bars(r.plot_path("gp-cache-misses"), "cache misses normalised to glibc (Vam Fig. 3)",
                         "misses / glibc", groups, e["allocators"], values, 1.0), "D1 and LL misses")
    s.table(["workload", "allocator", "instructions", "D1 misses", "LL misses", "D1 / glibc", "LL / glibc"], rows)
    if ratios:
        l2.estimates[VAM] = intervals.geometric_mean_exact(ratios)
    s.claim(l2)
    s.claim(l1)
