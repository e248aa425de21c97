"""Real programs with their own allocators switched off at run time: CPython's
pymalloc and SQLite's lookaside (ours: the 2026 paper's method on programs
nobody here wrote)."""
from ... import stats
from ...claims import Below, Claim, Source
from .. import plots
from ..results import Results, Section, estimate, seconds, summary_of

MODERN = "mimalloc"


def build(r: Results) -> Section:
    s = Section("real-programs", "Real programs: pymalloc and SQLite lookaside")
    s.p("custom = the program's own allocator (CPython's pymalloc, SQLite's lookaside), naive = switched off at run "
        "time (PYTHONMALLOC=malloc, no lookaside slots). Ratio naive/custom per allocator and preset, paired "
        "within a round: above 1, the custom allocator pays. " + r.timing.why)
    groups = {}   # allocator -> {workload: (naive key, custom key)} at Adv0
    for e in r.experiments("real-programs"):
        values, rows = {}, []
        for w in e["workloads"]:
            for alloc in e["allocators"]:
                for preset in e["presets"]:
                    naive, custom = r.key(e, w, "naive", alloc, preset), r.key(e, w, "custom", alloc, preset)
                    q = stats.ratio(r.ratios(naive, custom))
                    if preset == "Adv0":
                        values[(w, alloc)] = summary_of(q)
                        groups.setdefault(alloc, {})[w] = (naive, custom)
                    if custom in r.cells:
                        rows.append([w, alloc, preset, seconds(r.cells[custom].time), estimate(q)])
        if values:
            s.img(plots.bars(r.plot_path("real-programs"), "naive / custom (Adv0): above 1, the own allocator pays",
                             "naive / custom", e["workloads"], e["allocators"], values, 1.0), "real programs")
        s.table(["workload", "allocator", "preset", "custom time", "naive / custom (paired, 95% CI)"], rows)
    overall = {a: stats.geometric_mean_across([r.ratios(*p) for p in pairs.values()]) for a, pairs in groups.items()}
    s.table(["allocator", "geometric mean naive/custom over programs (Adv0, 95% CI)", "programs"],
            [[a, estimate(q), str(len(groups[a]))] for a, q in sorted(overall.items())])
    claim = Claim("real-programs.pools-gain-little", s.title,
                  f"a pool allocator (pymalloc, lookaside) gains at most 10% over {MODERN} on average",
                  Source("ours", "", "RQ1's conclusion (2026 §4.3: per-class allocators give no substantial "
                                     "benefit over a modern general-purpose allocator) tested on the pools of real "
                                     "programs"),
                  f"geometric mean over programs of naive/custom {r.timing.name} on {MODERN}, Adv0", Below(1.10), "—",
                  why="a real program's pool also serves its own bookkeeping and keeps objects warm in cache, which "
                      "naive mode loses")
    if MODERN in groups:
        claim.cells.update(k for pair in groups[MODERN].values() for k in pair)
        claim.estimates[MODERN] = overall[MODERN]
    s.claim(claim)
    return s
