"""The stand-ins calibrated against the papers' own statistics (issue 30): this
run's profiles and naive cells against every published figure."""
from ... import calibration
from ..results import Results, Section


def build(r: Results) -> Section:
    s = Section("calibration", "Calibration: the stand-ins against their programs' published statistics")
    s.p("Each stand-in's statistics in naive mode (every object through malloc/free), from this run's profile at "
        "the scale the statistics section ran and, for the rate, the median CPU time of the naive cell on glibc at "
        "Adv0; beside them, every figure a paper prints for the program it stands in for (2002 Table 3, 2026 "
        "Fig. 2, Vam Table 1, Heap Layers Table 4). A stand-in is calibrated on a statistic when ours / paper is "
        f"within {calibration.BOUND:g}× either way; outside it, the row gives the reason in one line. "
        "The time in memory operations is Table 3's (a profile of each program with the Windows XP allocator); "
        "ours is the share of the run's instructions inside the C library's malloc, free and their kin, called "
        "from outside it (callgrind, inclusive; naive mode on glibc at the scale [bench.memory-operations] "
        "gives). "
        + "; ".join(f"`{w}`: {why}" for w, why in calibration.NO_FIGURES.items()) + ".")
    rows = []
    shares = {b["contender"]: b["memory_operations_percent"] for b in r.bench
              if b["bench"] == "memory-operations" and b["status"] == "ok"}
    profiles = {}
    for p in r.profiles:
        if p["mode"] == "naive" and p["workload"] in calibration.PROGRAM and p["status"] == "ok":
            profiles.setdefault(p["workload"], []).append(p)
    for workload in calibration.PROGRAM:
        if workload not in profiles:
            continue
        p = max(profiles[workload], key=lambda p: p["scale"])  # the evaluation scale, not a cachegrind one
        cell = r.cells.get((workload, "naive", p["scale"], "glibc", "Adv0"))
        summary = cell and (cell.cpu if cell.cpu and cell.cpu.median else cell.time)
        cpu = summary.median if summary else None
        ours = calibration.measured(p, cpu, shares.get(workload))
        rows += [[f"{row[0]}, scale {p['scale']}"] + row[1:]
                 for row in calibration.table_rows(calibration.rows(workload, ours))]
    if not rows:
        s.p("No stand-in was profiled in naive mode in this run (the statistics section did not run).")
        return s
    s.table(calibration.HEADER, rows)
    return s
