"""Allocation statistics (2002 Table 3), from the profiler's exact counts."""
from ...workload_catalogue import PAPER_PROGRAM, PAPER_TABLE3
from ..results import Results, Section


def build(r: Results) -> Section:
    s = Section("statistics", "Allocation statistics (2002 Table 3)")
    s.p("From the profiler (exact counts of every malloc-family call), one profile per workload, mode and scale "
        "(the scale the experiments ran). The paper's program is shown beneath ours where it has one. Objects per "
        "second: total objects over the median time of the naive mode on glibc at Adv0, where that cell ran; our "
        "workloads allocate at a far higher rate than the papers' programs.")
    rows = []
    for p in sorted(r.profiles, key=lambda p: (p["workload"], p["mode"] != "naive", p["mode"], p["scale"])):
        if p["status"] != "ok":
            rows.append([p["workload"], f"{p['mode']}, {p['scale']}", f"profile failed: {p.get('error') or ''}"[:80]]
                        + [""] * 6)
            continue
        total_max = f"{p['total_bytes'] / p['peak_live_bytes']:.1f}" if p["peak_live_bytes"] else "—"
        cell = r.cells.get((p["workload"], p["mode"], p["scale"], "glibc", "Adv0"))
        rate = f"{p['total_objects'] / cell.time.median:,.0f}" if cell and cell.time and cell.time.median else "—"
        rows.append([p["workload"], f"{p['mode']}, {p['scale']}", f"{p['total_objects']:,}",
                     f"{p['peak_live_objects']:,}", f"{p['average_size']:.0f}", f"{p['total_bytes']:,}",
                     f"{p['peak_live_bytes']:,}", total_max, rate])
        paper = PAPER_PROGRAM.get(p["workload"])
        if paper and p["mode"] == "naive":
            o, po, size, total, peak = PAPER_TABLE3[paper]
            rows.append([f"↳ paper: {paper}", "", f"{o:,}", f"{po:,}", f"{size:,}", f"{total:,}", f"{peak:,}",
                         f"{total / peak:.1f}", ""])
    s.table(["workload", "mode, scale", "total objects", "max objects in use", "average size (B)",
             "total memory (B)", "max in use (B)", "total/max", "objects per second"], rows)
    return s
