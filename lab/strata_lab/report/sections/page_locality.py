"""Page-level locality and paging (Vam 2005, §4.5-4.6, Figs. 7-9), from
[bench.pages]: each general-purpose workload on each allocator once under
strata-pages (docs/pages.md). The fault curve is exact (LRU, every memory
size at once), so the claims' estimates are exact."""
import math
from pathlib import Path
from typing import Optional

from ... import intervals
from ...claims import Below, Claim, Source, effect
from ...pages import PAGE_KIB, faults_at, knee, plot_curves, read_curve_csv
from ..results import Results, Section

# Memory sizes of the claims: fractions of glibc's (DLmalloc's) footprint, the same memory for every allocator
# (Fig. 7's x axis is available RAM).
FRACTIONS = (0.5, 0.75)
PAGE_BASED = ("strata", "mimalloc", "jemalloc")   # size-class pages (BIBOP), like PHKmalloc and Vam
HEADER_BASED = ("glibc", "lea", "kingsley")       # per-object headers, DLmalloc's layout and Kingsley's
FULL_COMMAND = "`make lab LAB_CONFIG=lab/configs/full.toml`"
# Fig. 9's weakest gain of Vam over DLmalloc: 255.vortex, 45% of misses non-prefetchable against 60% (0.75).
PREFETCH_GAIN = 45 / 60 - 1
SCALE_WHY = ("the stand-ins' footprints are a few MB at valgrind's reduced scale, against the SPEC programs' 15–130 "
             "MB (Vam Table 1), so a few pages of allocator metadata or a different first-touch order decide the "
             "ratio")


def build(r: Results) -> Section:
    s = Section("page-locality", "Page-level locality and paging (Vam §4.5–4.6)")
    rows = [b for b in r.bench if b["bench"] == "pages" and b["status"] == "ok"]
    curves = {(b["contender"], b["allocator"]): c for b in rows if (c := _curve(r, b)) is not None}
    names = list(dict.fromkeys(b["contender"] for b in rows))
    s.p("Every load and store of the program and of its allocator (each allocator preloaded as the program's "
        "malloc), at 4 KiB pages, under strata-pages (docs/pages.md): the LRU stack distance of each reference "
        "gives the page faults of every memory size at once (Mattson et al. 1970), as Vam's LRU simulator does "
        "(§4.6: Fig. 8's simulated miss curves); pages given back to the kernel leave the LRU queue. Faults "
        "include the compulsory ones (first touches). Valgrind runs at a reduced scale; the full scale is in "
        f"full only ({FULL_COMMAND}). Swap prefetching (Fig. 9) is simulated as Vam's §4.6 describes (a buffer "
        "of the last 256 pages read ahead; a miss outside it reads its aligned group of 8) on the LRU misses in a "
        "memory of half glibc's footprint; first touches read no swap and are left out.")
    if not rows:
        s.p("Not run: this configuration has no [bench.pages].")
    for name in names:
        _workload(r, s, name, [b for b in rows if b["contender"] == name], curves)
    by = {(b["contender"], b["allocator"]): b for b in rows}
    for claim in _claims(s.title, names, curves, by):
        s.claim(claim)
    return s


class Curve(list):
    """A fault curve (faults[m] for m pages) with the footprint of its run (distinct pages)."""
    footprint: int = 0


def _curve(r: Results, row: dict) -> Optional[Curve]:
    path = Path(r.folder) / "pages" / f"{row['contender']}-{row['allocator']}" / "curve.csv"
    if not path.is_file():
        return None
    curve = Curve(read_curve_csv(path))
    curve.footprint = row["distinct_pages"]
    return curve


def _common_memory(curves: dict, name: str) -> dict:
    """{fraction: pages}: the claims' memory sizes for a workload, fractions of glibc's footprint (the
    distinct pages it touches, its first-touch faults: the curve's last point less the refills)."""
    glibc = curves.get((name, "glibc"))
    return {f: max(1, round(f * glibc.footprint)) for f in FRACTIONS} if glibc else {}


def _workload(r: Results, s: Section, name: str, rows: list, curves: dict) -> None:
    memory = _common_memory(curves, name)
    table = []
    for b in rows:
        curve = curves.get((name, b["allocator"]))
        compulsory = curve[-1] if curve else None
        at = [f"{faults_at(curve, m):,}" if curve else "-" for m in memory.values()]
        table.append([b["allocator"], f"{b['references'] / 1e6:,.1f} M", f"{b['distinct_pages'] * PAGE_KIB:,}",
                      f"{compulsory:,}" if compulsory is not None else "-",
                      f"{knee(curve, compulsory) * PAGE_KIB:,}" if curve else "-", *at,
                      f"{b['peak_working_set'] * PAGE_KIB:,}", _prefetch_text(b)])
    scale = rows[0]["scale"]
    s.p(f"**{name}** (naive mode, scale {scale}): faults in a memory of "
        + ", ".join(f"{f:.0%} of glibc's footprint ({m * PAGE_KIB:,} KiB)" for f, m in memory.items()) + ".")
    s.table(["allocator", "references", "footprint (KiB)", "compulsory faults",
             "memory for faults within 10% of compulsory (KiB)", *[f"faults at {f:.0%}" for f in memory],
             "peak working set per window (KiB)", "prefetchable / swap misses at 50% (Fig. 9)"], table)
    mine = {b["allocator"]: curves[(name, b["allocator"])] for b in rows if (name, b["allocator"]) in curves}
    path = r.plot_path(f"page-locality-{name}")
    if path is not None and mine:
        s.img(plot_curves(mine, path, f"{name}: LRU page faults against resident memory"),
              f"{name}: fault curves (Vam Fig. 8)")


def _prefetch_text(b: dict) -> str:
    if not b.get("prefetch_misses"):
        return "-" if b.get("prefetch_misses") is None else "no misses"
    return f"{b['prefetchable']:,} / {b['prefetch_misses']:,} ({b['prefetchable'] / b['prefetch_misses']:.0%})"


def _non_prefetchable_share(b: Optional[dict]) -> Optional[float]:
    if b is None or not b.get("prefetch_misses"):
        return None
    return 1 - b["prefetchable"] / b["prefetch_misses"]


def _refaults_ratio(curves: dict, name: str, pages: int) -> Optional[intervals.Estimate]:
    """libstrata's faults beyond its first touches over glibc's, in a memory of `pages`: the faults that read
    swap, which is what paging costs in run time (first touches are zero-filled). None when glibc has none."""
    strata, glibc = curves.get((name, "strata")), curves.get((name, "glibc"))
    if not strata or not glibc:
        return None
    top, bottom = faults_at(strata, pages) - strata[-1], faults_at(glibc, pages) - glibc[-1]
    return intervals.exact(top / bottom) if bottom > 0 else None


def _share_of(rows: dict, name: str, allocators) -> Optional[float]:
    """The geometric mean of the allocators' non-prefetchable shares (None unless each has one above 0)."""
    shares = [_non_prefetchable_share(rows.get((name, a))) for a in allocators]
    if not shares or any(not x for x in shares):
        return None
    return math.exp(sum(math.log(x) for x in shares) / len(shares))


def _claims(title: str, names: list, curves: dict, rows: dict) -> list:
    pressure = Claim("page-locality.memory-pressure", title,
                     "with the same memory, below the footprint, libstrata pages no more than glibc (DLmalloc)",
                     Source("Vam 2005", "§4.5, Fig. 7", "Of the general-purpose allocators, Vam delivers the best "
                                                        "performance across a wide range of available RAM."),
                     "per workload and memory size (50% and 75% of glibc's footprint): LRU faults beyond the first "
                     "touches (the ones that read swap; run time under RAM pressure follows them), libstrata / "
                     "glibc", Below(1.0), "over 10× faster than DLmalloc when memory is scarce", every=True,
                     why="simulated faults stand in for run times with less RAM; and " + SCALE_WHY)
    locality = Claim("page-locality.miss-curve", title,
                     "libstrata needs no more memory than glibc (DLmalloc) to bring its faults within 10% of the "
                     "compulsory ones: its miss curve falls at least as early",
                     Source("ours", "", "Vam Fig. 8 plots each allocator's simulated miss curve, but §4.6 compares "
                                        "the curves with the real system's faults, not the allocators with each "
                                        "other; this reads Fig. 8 as §4.5's finding (Vam pages least) would have it"),
                     "per workload: memory for faults within 10% of compulsory, libstrata / glibc", Below(1.0),
                     "—", every=True, why=SCALE_WHY)
    layout = Claim("page-locality.page-based-layout", title,
                   "a page-based layout makes page misses more prefetchable: page-based allocators (libstrata, "
                   "mimalloc, jemalloc) have a smaller share of non-prefetchable misses than header-based ones "
                   "(glibc, Lea, Kingsley) with the same memory",
                   Source("Vam 2005", "§4.6", "We attribute the improved prefetchability in PHKmalloc and Vam to "
                                              "their page-oriented design and ordered allocation at the page "
                                              "level."),
                   "per workload, in a memory of 50% of glibc's footprint: geometric mean of the page-based "
                   "allocators' share of misses not prefetchable / that of the header-based ones",
                   Below(effect(PREFETCH_GAIN)), "PHKmalloc and Vam against DLmalloc (Fig. 9; ours: 255.vortex's "
                                                 "45% against 60% the weakest gain; margin: half of it)",
                   every=True, why="mimalloc's and jemalloc's page-based layouts do not order allocation by page as "
                                   "Vam and PHKmalloc do; and " + SCALE_WHY)
    prefetch = Claim("page-locality.prefetchability", title,
                     "libstrata's page misses are at least as prefetchable as glibc's (DLmalloc's): no larger a share "
                     "of them needs a disk read of its own",
                     Source("Vam 2005", "§4.6, Fig. 9", "However, its prefetchability is much less with DLmalloc "
                                                        "(only 55% prefetchable). This result demonstrates that "
                                                        "253.perlbmk's data locality is better preserved by "
                                                        "PHKmalloc and Vam than by DLmalloc."),
                     "per workload, in a memory of 50% of glibc's footprint: share of LRU misses not prefetchable, "
                     "libstrata / glibc", Below(effect(PREFETCH_GAIN)),
                     "Vam 79-80% prefetchable, DLmalloc 55-60% (margin: half of 255.vortex's gain, claims.effect)",
                     every=True, why=SCALE_WHY)
    for name in names:
        strata_np, glibc_np = (_non_prefetchable_share(rows.get((name, a))) for a in ("strata", "glibc"))
        if strata_np is not None and glibc_np:
            prefetch.estimates[name] = intervals.exact(strata_np / glibc_np)
        memory = _common_memory(curves, name)
        for f, pages in memory.items():
            pressure.estimates[f"{name} at {f:.0%}"] = _refaults_ratio(curves, name, pages)
        strata, glibc = curves.get((name, "strata")), curves.get((name, "glibc"))
        if strata and glibc:
            locality.estimates[name] = intervals.exact(knee(strata, strata[-1]) / knee(glibc, glibc[-1]))
        page_based, header_based = _share_of(rows, name, PAGE_BASED), _share_of(rows, name, HEADER_BASED)
        if page_based is not None and header_based is not None:
            layout.estimates[name] = intervals.exact(page_based / header_based)
    return [pressure, locality, prefetch, layout]
