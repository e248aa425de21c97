"""Page-level locality and paging (Vam 2005, §4.5-4.6, Figs. 7-9), from
[bench.pages]: each general-purpose workload on each allocator once under
strata-pages (docs/pages.md). The fault curve is exact (LRU, every memory
size at once), so the claims' estimates are exact."""
import math
from pathlib import Path
from typing import Optional

from ... import stats
from ...claims import Below, Claim, Source
from ...pages import PAGE_KIB, faults_at, knee, plot_curves, read_curve_csv
from ..results import Results, Section

# Memory sizes of the claims: fractions of glibc's (DLmalloc's) footprint, the same memory for every allocator
# (Fig. 7's x axis is available RAM).
FRACTIONS = (0.5, 0.75)
PAGE_BASED = ("strata", "mimalloc", "jemalloc")   # size-class pages (BIBOP), like PHKmalloc and Vam
HEADER_BASED = ("glibc", "lea", "kingsley")       # per-object headers, DLmalloc's layout and Kingsley's
FULL_COMMAND = "`make lab LAB_CONFIG=lab/configs/full.toml`"


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


def _ratio_at(curves: dict, name: str, numerator, denominator, pages: int) -> Optional[stats.Estimate]:
    """Faults of numerator / denominator in a memory of `pages`; either side a tuple of allocators
    (their geometric mean). None when a curve is missing."""
    def mean(allocs):
        found = [curves.get((name, a)) for a in allocs]
        if not found or any(c is None for c in found):
            return None
        return math.exp(sum(math.log(faults_at(c, pages)) for c in found) / len(found))
    top, bottom = mean(numerator), mean(denominator)
    return stats.exact(top / bottom) if top is not None and bottom else None


def _claims(title: str, names: list, curves: dict, rows: dict) -> list:
    pressure = Claim("page-locality.memory-pressure", title,
                     "with the same memory, below the footprint, libstrata faults no more than glibc (DLmalloc)",
                     Source("Vam 2005", "§4.5, Fig. 7", "Of the general-purpose allocators, Vam delivers the best "
                                                        "performance across a wide range of available RAM."),
                     "per workload and memory size (50% and 75% of glibc's footprint): LRU faults of libstrata / "
                     "glibc", Below(1.0), "over 10× faster than DLmalloc when memory is scarce", every=True)
    locality = Claim("page-locality.miss-curve", title,
                     "libstrata needs no more memory than glibc (DLmalloc) to bring its faults within 10% of the "
                     "compulsory ones: its miss curve falls at least as early",
                     Source("Vam 2005", "§4.6, Fig. 8", "We then run these traces through an LRU simulator to "
                                                        "generate page miss curves that indicate the number of "
                                                        "misses (page faults) that would arise for every possible "
                                                        "size of available memory."),
                     "per workload: memory for faults within 10% of compulsory, libstrata / glibc", Below(1.0),
                     "Vam's curves lie below DLmalloc's (Fig. 8)", every=True)
    layout = Claim("page-locality.page-based-layout", title,
                   "a page-based layout improves page-level locality: page-based allocators (libstrata, mimalloc, "
                   "jemalloc) fault less than header-based ones (glibc, Lea, Kingsley) with the same memory",
                   Source("Vam 2005", "§4.6", "We attribute the improved prefetchability in PHKmalloc and Vam to "
                                              "their page-oriented design and ordered allocation at the page "
                                              "level."),
                   "per workload, at 50% of glibc's footprint: geometric mean of the page-based allocators' LRU "
                   "faults / that of the header-based ones", Below(1.0), "PHKmalloc and Vam against DLmalloc",
                   every=True)
    prefetch = Claim("page-locality.prefetchability", title,
                     "libstrata's page misses are at least as prefetchable as glibc's (DLmalloc's): no larger a share "
                     "of them needs a disk read of its own",
                     Source("Vam 2005", "§4.6, Fig. 9", "However, its prefetchability is much less with DLmalloc "
                                                        "(only 55% prefetchable). This result demonstrates that "
                                                        "253.perlbmk's data locality is better preserved by "
                                                        "PHKmalloc and Vam than by DLmalloc."),
                     "per workload, in a memory of 50% of glibc's footprint: share of LRU misses not prefetchable, "
                     "libstrata / glibc", Below(1.0), "Vam 79-80% prefetchable, DLmalloc 55-60%", every=True)
    for name in names:
        strata_np, glibc_np = (_non_prefetchable_share(rows.get((name, a))) for a in ("strata", "glibc"))
        if strata_np is not None and glibc_np:
            prefetch.estimates[name] = stats.exact(strata_np / glibc_np)
        memory = _common_memory(curves, name)
        for f, pages in memory.items():
            pressure.estimates[f"{name} at {f:.0%}"] = _ratio_at(curves, name, ("strata",), ("glibc",), pages)
        strata, glibc = curves.get((name, "strata")), curves.get((name, "glibc"))
        if strata and glibc:
            locality.estimates[name] = stats.exact(knee(strata, strata[-1]) / knee(glibc, glibc[-1]))
        if memory:
            layout.estimates[name] = _ratio_at(curves, name, PAGE_BASED, HEADER_BASED, memory[FRACTIONS[0]])
    return [pressure, locality, prefetch, layout]
