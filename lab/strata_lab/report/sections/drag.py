"""Object drag (2002 §7, Fig. 4 and 5), from [bench.object-drag]: each
workload in each mode once under strata-drag (deterministic figures)."""
from ... import intervals
from ...claims import Above, Below, Claim, Source, bound, effect
from ..results import Results, Section

MODES = ("custom", "naive", "reap")
FREEING_PROGRAMS_DRAG = 1.10   # 2002 Fig. 4: programs using general-purpose allocation average 1.1
# 2002 Fig. 4's programs without regions, by our counterparts (Table 1: per-class, custom pattern).
NON_REGION = {"boxed-sim": "boxed-sim", "parser": "197.parser"}
NON_REGION_DRAG = 1.05        # "non-regions (average 1.0)", with a 5% margin
GENERAL_PURPOSE = ("cfrac", "text", "bigbuf")
GENERAL_PURPOSE_DRAG = bound(0.10)   # "general-purpose memory allocation (average 1.1)": twice its excess
BULK = 0.5                    # "the bulk of the programs using general-purpose allocation": at least half


def build(r: Results) -> Section:
    s = Section("drag", "Drag (2002 §7)")
    rows = [b for b in r.bench if b["bench"] == "object-drag"]
    by = {(b["contender"], b["allocator"]): b for b in rows}   # contender = workload, allocator = its mode
    names = list(dict.fromkeys(b["contender"] for b in rows))
    if rows:
        s.p("Total drag = area under the memory-in-use curve / area if every object were freed right after its last "
            "access (allocation time), measured by strata-drag (docs/drag.md). custom: the program's own regions "
            "(seen as their malloc'd chunks); naive: each object a malloc block freed with its region; reap: "
            "objects freed as they die. Curves and site tables: drag/<workload>-<mode>/.")
        s.table(["workload", "scale", *MODES, "naive peak in use / ideal"],
                [[n, str(next(b["scale"] for b in rows if b["contender"] == n))]
                 + [_drag_text(by.get((n, m))) for m in MODES] + [_peaks(by.get((n, "naive")))] for n in names])
    regions = [n for n in names if n not in NON_REGION and n not in GENERAL_PURPOSE]
    drag = lambda mode, among=names: {n: intervals.exact(d) for n, d in _total_drag(by, mode, among).items()}
    claim = Claim("drag.regions-drag", s.title, "objects freed only with their region drag in every program",
                  Source("2002", "§7", "The programs with regions consistently exhibit more drag, including 176.gcc "
                                       "(1.16), and mudlle (1.23), and lcc has high drag (3.34)."),
                  "per region program: total drag in naive mode (objects freed with their region), against the "
                  "most the non-region programs may have", Above(NON_REGION_DRAG),
                  "1.16, 1.23, 3.34 (non-regions: 1.0; ours: more than their 1.05 bound)",
                  estimates=drag("naive", regions), every=True,
                  why="a stand-in's regions hold only what it allocates between its resets; where it resets after "
                      "each unit of work its dead objects wait less than in the paper's programs")
    s.claim(claim)
    lcc = by.get(("compiler", "naive"))   # Fig. 5: lcc's memory-requirement profile
    peak = Claim("drag.lcc-peak", s.title,
                 "with regions the peak memory exceeds the peak if each object were freed after its last access",
                 Source("2002", "§7", "The peak memory required with regions for lcc is approximately 1MB, while the "
                                      "peak when objects are immediately freed is 670K, an increase of 62%."),
                 "compiler (lcc), naive mode: peak in use / peak if freed at last access", Above(effect(0.62)),
                 "+62% (margin: half of it, claims.effect)",
                 paper_value=1.62, why="compiler frees its regions per function as lcc does, but its functions' dead objects are a "
                     "smaller share of a region than lcc's (see the drag table)")
    if lcc is not None and lcc.get("peak_ideal_bytes") and lcc["status"] == "ok":
        peak.estimates["compiler"] = intervals.exact(lcc["peak_in_use_bytes"] / lcc["peak_ideal_bytes"])
    s.claim(peak)
    removes = Claim("drag.reap-removes-drag", s.title,
                    "individual frees remove the drag: a reap's total drag is at most that of programs that free "
                    "as they go (1.1) in every program",
                    Source("ours", "", "the 2002 paper proposes reaps so that region programs can free dead objects "
                                       "(§7–8) but never measured a reap's drag; 'remove' = the drag of programs "
                                       "that free with a general-purpose allocator, Fig. 4's 1.1"),
                    "per program: total drag in reap mode", Below(FREEING_PROGRAMS_DRAG), "—",
                    estimates=drag("reap"), every=True,
                    why="a reap frees only what the program frees: a stand-in that keeps dead objects until a reset "
                        "keeps their drag")
    s.claim(removes)
    _without_regions(s, by, names)
    return s


def _total_drag(by: dict, mode: str, among: list) -> dict:
    """program -> its measured total drag in that mode (programs whose run failed left out)."""
    return {n: by[(n, mode)]["total_drag"] for n in among if (n, mode) in by
            and by[(n, mode)].get("total_drag") is not None and by[(n, mode)]["status"] == "ok"}


def _without_regions(s: Section, by: dict, names: list) -> None:
    """Fig. 4's programs without regions: the non-region custom programs with each custom free a free() (naive
    mode: the program frees exactly where its freelist or arena took the object back) and the programs that only
    ever used malloc/free."""
    drag = _total_drag(by, "naive", names)
    custom = Claim("drag.non-regions-near-one", s.title,
                   "programs with non-region custom allocators have drag near 1.0",
                   Source("2002", "Fig. 4", "Drag statistics for applications using general-purpose memory "
                                            "allocation (average 1.1), non-regions (average 1.0) and region custom "
                                            "allocators (average 1.6, 1.1 excluding lcc)."),
                   "per program: total drag in naive mode of " + ", ".join(f"{w} ({p})" for w, p in
                                                                           NON_REGION.items()),
                   Below(NON_REGION_DRAG), "average 1.0 (margin: at most 1.05)",
                   estimates={n: intervals.exact(drag[n]) for n in NON_REGION if n in drag}, every=True,
                   why="the stand-ins free at the points their custom allocators took objects back; drag above 1 is "
                       "objects they keep after their last use")
    s.claim(custom)
    general = Claim("drag.general-purpose-low", s.title,
                    "programs that use general-purpose allocation have little drag on average",
                    Source("2002", "§7", "Programs using non-region custom allocators have minimal drag, as do the "
                                         "bulk of the programs using general-purpose allocation, indicating that "
                                         "programmers tend to be aggressive about reclaiming memory."),
                    "per program: total drag of " + ", ".join(GENERAL_PURPOSE) + " (at least half of them: "
                    "the bulk)", Below(GENERAL_PURPOSE_DRAG), "average 1.1 (margin: twice its excess, claims.bound)",
                    every=True, at_least=BULK,
                    why="a general-purpose stand-in with drag keeps objects after their last use, as 255.vortex "
                        "does in the paper")
    measured = [drag[n] for n in GENERAL_PURPOSE if n in drag]
    absent = [n for n in GENERAL_PURPOSE if n not in drag]
    if absent and measured:
        s.p(f"In full only (`strata-lab evaluate --config lab/configs/full.toml`): the drag of {', '.join(absent)}.")
    general.estimates.update({n: intervals.exact(drag[n]) for n in GENERAL_PURPOSE if n in drag})
    s.claim(general)


def _drag_text(b) -> str:
    if b is None:
        return "-"
    if b.get("total_drag") is None:
        return b.get("status") or "-"
    return f"{b['total_drag']:.2f}" + (" (partial)" if b.get("status") == "crashed" else "")


def _peaks(b) -> str:
    if b is None or b.get("peak_in_use_bytes") is None:
        return "-"
    return f"{b['peak_in_use_bytes'] / 1024:,.0f} / {b['peak_ideal_bytes'] / 1024:,.0f} KiB"
