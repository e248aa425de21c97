"""Real programs nobody here wrote (ours: the 2026 paper's method on them).
Pools switched off at run time (CPython's pymalloc, SQLite's lookaside, GLib's
GSlice: RQ1); Debian's Clang under Adv3 on the paper's three allocators (RQ3:
its regions serve only part of its allocations); and the general-purpose
allocators ranked on Debian's clang, gcc, perl, bc and lua. A program that
could not run here (its package missing) reads "not measured" with the reason."""
from ... import intervals
from ...claims import Above, Below, Claim, Source
from .. import plots
from ..results import Results, Section, estimate, ratio_claim_estimates, seconds, summary_of

MODERN = "mimalloc"
CLANG, RQ3_ALLOCATORS, PRESET = "clang", ("glibc", "jemalloc", "mimalloc"), "Adv3"
# The real programs the issue asked for that no experiment can run here, and why (they read "not measured").
NOT_INSTALLED = {
    "blender": "Debian's blender (with its dependencies, about 1 GB installed and several minutes to fetch and "
               "unpack) does not fit `make lab`'s 25 minutes on a fresh clone: the paper's geometry_nodes and sculpt "
               "are not measured; `router` and `geometry` stand in for them in the resilience section",
}


def _modes(r: Results, workload: str) -> list:
    """The modes a program ran in (custom and naive: a pool switched off; one of them: Debian's others)."""
    return sorted({key[1] for key in r.cells if key[0] == workload})


def build(r: Results) -> Section:
    s = Section("real-programs", "Real programs: pools switched off, Clang under Adv3, Debian's programs ranked")
    s.p("Programs nobody here wrote. custom = the program's own allocator (CPython's pymalloc, SQLite's lookaside, "
        "GLib 2.74's GSlice, Clang's BumpPtrAllocator, GCC's obstacks), naive = switched off at run time "
        "(PYTHONMALLOC=malloc, no lookaside slots, G_SLICE=always-malloc); clang and gcc cannot switch theirs off, "
        "and perl, bc and lua send every object to malloc. " + r.timing.why)
    _pools(r, s)
    _clang(r, s)
    _ranking(r, s)
    _not_measured(r, s)
    return s


def _pools(r: Results, s: Section) -> None:
    """RQ1 on the real pools: naive/custom per program and allocator, and its geometric mean."""
    groups, values, rows, names, allocs = {}, {}, [], [], []
    for e in r.experiments("real-programs"):
        for w in e["workloads"]:
            if not {"custom", "naive"} <= set(_modes(r, w)) or not {"custom", "naive"} <= set(e["modes"]):
                continue
            for alloc in e["allocators"]:
                for preset in e["presets"]:
                    naive, custom = r.key(e, w, "naive", alloc, preset), r.key(e, w, "custom", alloc, preset)
                    if custom not in r.cells:
                        continue
                    q = intervals.ratio(r.ratios(naive, custom))
                    if preset == "Adv0":
                        values[(w, alloc)] = summary_of(q)
                        groups.setdefault(alloc, {})[w] = (naive, custom)
                        names += [w] if w not in names else []
                        allocs += [alloc] if alloc not in allocs else []
                    rows.append([w, alloc, preset, seconds(r.cells[custom].time), estimate(q)])
    if values:
        s.img(plots.bars(r.plot_path("real-programs"), "naive / custom (Adv0): above 1, the own allocator pays",
                         "naive / custom", names, allocs, values, 1.0), "real programs' pools")
    s.table(["workload", "allocator", "preset", "custom time", "naive / custom (paired, 95% CI)"], rows)
    overall = {a: intervals.geometric_mean_across([r.ratios(*p) for p in pairs.values()]) for a, pairs in groups.items()}
    s.table(["allocator", "geometric mean naive/custom over programs (Adv0, 95% CI)", "programs"],
            [[a, estimate(q), str(len(groups[a]))] for a, q in sorted(overall.items())])
    claim = Claim("real-programs.pools-gain-little", s.title,
                  f"a pool allocator (pymalloc, lookaside, GSlice) gains at most 10% over {MODERN} on average",
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


def _clang(r: Results, s: Section) -> None:
    """RQ3 on Clang: custom Adv3/Adv0 on each allocator (the paper's only region program with partial resistance)."""
    pairs, rows = {}, []
    for e in r.experiments("real-programs"):
        if CLANG not in e["workloads"] or PRESET not in e["presets"]:
            continue
        for alloc in e["allocators"]:
            adv3, adv0 = r.key(e, CLANG, "custom", alloc, PRESET), r.key(e, CLANG, "custom", alloc, "Adv0")
            if adv3 in r.cells and adv0 in r.cells and alloc not in pairs:
                pairs[alloc] = (adv3, adv0)
                rows.append([alloc, seconds(r.cells[adv0].time), seconds(r.cells[adv3].time),
                             estimate(intervals.ratio(r.ratios(adv3, adv0)))])
    s.table(["clang on", "custom Adv0", f"custom {PRESET}", f"{PRESET}/Adv0 (paired, 95% CI)"], rows)
    claim = Claim("real-programs.clang-partial-resistance", s.title,
                  f"Clang with its region allocator still slows down under {PRESET}, on each of glibc, jemalloc and "
                  "mimalloc (partial resistance: not all its allocations go through its regions)",
                  Source("2026", "§4.5", "Clang is the only exception, as not all of its allocations are "
                                         "region-managed, yielding only partial resistance (3.2–9.4% depending on "
                                         "the underlying allocator)."),
                  f"per allocator: clang custom {PRESET} / custom Adv0 {r.timing.name} (Debian's clang-14)",
                  Above(1.0), "3.2–9.4% (its regions' gain over naive allocation under Adv3)",
                  note="Clang's regions cannot be switched off, so the paper's own quantity (custom against naive "
                       "under Adv3) cannot be measured; what it implies is measured: custom mode is not unaffected",
                  why="Debian's clang-14 on our inputs is not the paper's Clang build and input; its allocations "
                      "outside the regions decide how much Adv3 slows it")
    ratio_claim_estimates(r, claim, {a: pairs[a] for a in RQ3_ALLOCATORS if a in pairs})
    s.claim(claim)


def _ranking(r: Results, s: Section) -> None:
    """The general-purpose allocators on Debian's programs (each in its one mode), against glibc at Adv0."""
    per_alloc, rows = {}, []
    for e in r.experiments("real-programs"):
        for w in e["workloads"]:
            modes = _modes(r, w)
            if "naive" in modes and "custom" in modes:
                continue   # the pools' programs: above
            mode = modes[0] if modes else None
            base = r.key(e, w, mode, "glibc", "Adv0")
            if base not in r.cells:
                continue
            for alloc in e["allocators"]:
                key = r.key(e, w, mode, alloc, "Adv0")
                if alloc == "glibc" or key not in r.cells or w in per_alloc.get(alloc, {}):
                    continue
                per_alloc.setdefault(alloc, {})[w] = (key, base)
                rows.append([w, mode, alloc, seconds(r.cells[key].time), estimate(intervals.ratio(r.ratios(key, base)))])
    s.table(["program", "mode", "allocator", "time", "allocator / glibc (paired, 95% CI)"], rows)
    overall = {a: intervals.geometric_mean_across([r.ratios(*p) for p in pairs.values()]) for a, pairs in per_alloc.items()}
    s.table(["allocator", "geometric mean allocator/glibc over Debian's programs (Adv0, 95% CI)", "programs"],
            [[a, estimate(q), ", ".join(per_alloc[a])] for a, q in sorted(overall.items())])
    claim = Claim("real-programs.mimalloc-beats-glibc", s.title,
                  "mimalloc is faster than glibc on average over Debian's real programs",
                  Source("2026", "§4.4", "Among the three tested general-purpose allocators, mimalloc provides the "
                                         "best overall performance on our selection of benchmarks."),
                  f"geometric mean over Debian's programs (clang, gcc, perl, bc, lua) of mimalloc / glibc "
                  f"{r.timing.name}, Adv0", Below(1.0, strict=True), "best overall",
                  why="Debian's programs are not the paper's benchmarks: a program that allocates little (bc, lua "
                      "on short inputs) shows no allocator at all")
    if MODERN in per_alloc:
        claim.cells.update(k for pair in per_alloc[MODERN].values() for k in pair)
        claim.estimates[MODERN] = overall[MODERN]
    s.claim(claim)


def _not_measured(r: Results, s: Section) -> None:
    missing = dict(r.meta.get("not_measured", {}), **NOT_INSTALLED)
    s.p("Not measured here (never dropped): " + "; ".join(f"**{name}**: {why}" for name, why in sorted(missing.items()))
        + ".")
