"""Allocation statistics (2002 Table 3), from the profiler's exact counts, and the papers' allocation rates
(Vam Table 1, Heap Layers Table 4) beside ours: the reason most often given when a verdict departs."""
from typing import Optional

from ...workload_catalogue import PAPER_PROGRAM, PAPER_TABLE3
from ..results import Results, Section

# Objects allocated per second of run time in the papers, by our counterpart: (program, rate, where).
# Vam Table 1 "Alloc. Rate (#/sec)" (with DLmalloc); Heap Layers Table 4 "Memory ops/sec" (with Lea) halved: a
# malloc and a free per object.
PAPER_RATES = {"parser": ("197.parser", 2_813_000, "Vam Table 1"),
               "scopes": ("176.gcc", 373_000, "Vam Table 1"),
               "text": ("253.perlbmk", 129_000, "Vam Table 1"),
               "cfrac": ("cfrac", 1_207_862 / 2, "Heap Layers Table 4, memory ops/s halved")}
SECTION_POINTER = "Statistics section: objects per second, ours beside the papers'; Calibration section"


def rate(r: Results, workload: str) -> Optional[float]:
    """Our objects per second of run time: the naive profile's total objects over the median time of the naive
    mode on glibc at Adv0 at the profile's scale (None where either is missing)."""
    for p in r.profiles:
        if p["workload"] == workload and p["mode"] == "naive" and p["status"] == "ok":
            cell = r.cells.get((workload, "naive", p["scale"], "glibc", "Adv0"))
            if cell and cell.time and cell.time.median:
                return p["total_objects"] / cell.time.median
    return None


def rate_why(r: Results, workloads, what: str = "which magnifies any allocator cost against the program's work") -> str:
    """One line: our stand-ins' allocation rates against the papers' programs', where both are known."""
    parts, faster = [], True
    for w in workloads:
        ours, paper = rate(r, w), PAPER_RATES.get(w)
        if ours and paper:
            parts.append(f"{w} {ours / 1e6:.1f} M objects/s against {paper[0]}'s {paper[1] / 1e6:.2f} M "
                         f"({paper[2]})")
            faster = faster and ours > paper[1]
    if parts and faster:
        return "our stand-ins allocate faster than the papers' programs: " + "; ".join(parts) + f", {what}"
    if parts:   # not the rate, then: say the figures and point to the profile
        return ("allocation rates, ours against the papers' programs: " + "; ".join(parts)
                + "; the departure is in the stand-ins' profile (Calibration section), not their rate")
    return ("our stand-ins allocate many more objects per unit of work than the papers' programs (" + SECTION_POINTER
            + f"), {what}")


def peak_live(r: Results, workload: str) -> Optional[int]:
    """Our peak live objects in the naive mode at the largest scale profiled (None without a profile)."""
    found = [p for p in r.profiles if p["workload"] == workload and p["mode"] == "naive" and p["status"] == "ok"]
    return max(found, key=lambda p: p["scale"])["peak_live_objects"] if found else None


def peak_why(r: Results, workloads, what: str = "and preconditioning, sized to the peak, fragments a smaller heap "
                                                 "than the paper's") -> str:
    """One line: our stand-ins' peak live objects against their programs' (2002 Table 3), where both are known."""
    parts = []
    for w in workloads:
        ours, paper = peak_live(r, w), PAPER_PROGRAM.get(w)
        if ours and paper:
            parts.append(f"{w} {ours:,} against {paper}'s {PAPER_TABLE3[paper][1]:,}")
    if parts:
        return "our stand-ins keep fewer objects live at peak (2002 Table 3): " + "; ".join(parts) + f", {what}"
    return ("our stand-ins keep fewer objects live at peak than the papers' programs (2002 Table 3; the Statistics "
            f"section), {what}")


def build(r: Results) -> Section:
    s = Section("statistics", "Allocation statistics (2002 Table 3)")
    s.p("From the profiler (exact counts of every malloc-family call), one profile per workload, mode and scale "
        "(the scale the experiments ran). The paper's program is shown beneath ours where it has one. Objects per "
        "second: total objects over the median time of the naive mode on glibc at Adv0, where that cell ran; the "
        "paper's rate where a paper gives one (" + ", ".join(f"{p} {rt:,.0f}/s, {where}" for p, rt, where in
                                                          PAPER_RATES.values()) + "; 2002 Table 3 gives none).")
    rows = []
    for p in sorted(r.profiles, key=lambda p: (p["workload"], p["mode"] != "naive", p["mode"], p["scale"])):
        if p["status"] != "ok":
            rows.append([p["workload"], f"{p['mode']}, {p['scale']}", f"profile failed: {p.get('error') or ''}"[:80]]
                        + [""] * 6)
            continue
        total_max = f"{p['total_bytes'] / p['peak_live_bytes']:.1f}" if p["peak_live_bytes"] else "—"
        cell = r.cells.get((p["workload"], p["mode"], p["scale"], "glibc", "Adv0"))
        timed = cell and cell.time and cell.time.median
        rate_text = f"{p['total_objects'] / cell.time.median:,.0f}" if timed else "—"
        rows.append([p["workload"], f"{p['mode']}, {p['scale']}", f"{p['total_objects']:,}",
                     f"{p['peak_live_objects']:,}", f"{p['average_size']:.0f}", f"{p['total_bytes']:,}",
                     f"{p['peak_live_bytes']:,}", total_max, rate_text])
        paper = PAPER_PROGRAM.get(p["workload"])
        if paper and p["mode"] == "naive":
            o, po, size, total, peak = PAPER_TABLE3[paper]
            known = PAPER_RATES.get(p["workload"])
            rows.append([f"↳ paper: {paper}", "", f"{o:,}", f"{po:,}", f"{size:,}", f"{total:,}", f"{peak:,}",
                         f"{total / peak:.1f}", f"{known[1]:,.0f} ({known[2]})" if known else ""])
    s.table(["workload", "mode, scale", "total objects", "max objects in use", "average size (B)",
             "total memory (B)", "max in use (B)", "total/max", "objects per second"], rows)
    return s
