"""The stand-ins calibrated against the papers' own statistics (issue 30):
every figure a paper publishes about a program one of our workloads stands in
for, with the paper (papers.PAPERS key), where it is and the text it is
printed as (a test finds that text in the paper); the stand-in's own figure,
measured from this run's profile and timed cells; and their ratio, held to
within 2x or given a one-line reason why it cannot be."""
from dataclasses import dataclass
from typing import Optional

BOUND = 2.0  # a stand-in is calibrated on a statistic when ours/paper is within [1/BOUND, BOUND]

# The statistics, in table order: key -> what the report calls it.
STATISTICS = {
    "total_objects": "total objects",
    "peak_live_objects": "peak live objects",
    "total_to_peak_objects": "total / peak live objects",
    "average_size": "mean size (B)",
    "total_bytes": "total bytes",
    "peak_live_bytes": "peak live bytes",
    "total_to_peak_bytes": "total / peak live bytes",
    "objects_per_cpu_second": "allocations per CPU-second",
    "memory_operations_percent": "time in memory operations (%)",
}


@dataclass(frozen=True)
class Figure:
    program: str      # the paper's program
    statistic: str    # a STATISTICS key
    value: float
    paper: str        # papers.PAPERS key
    where: str        # table or figure
    printed: tuple    # the figure(s) as the paper's text prints them (a test finds each there); two for a quotient


def _table3(program: str, printed: tuple) -> list:
    """2002 Table 3's row: total objects, max objects in use, average size, total memory, max in use, total/max,
    memory operations (% of runtime, with the Windows XP allocator)."""
    objects, peak, size, total, peak_bytes, ratio, share = printed
    number = lambda text: float(text.replace(",", "").rstrip("%"))
    row = [Figure(program, stat, number(text), "2002", "Table 3", (text,)) for stat, text in
           (("total_objects", objects), ("peak_live_objects", peak), ("average_size", size),
            ("total_bytes", total), ("peak_live_bytes", peak_bytes), ("total_to_peak_bytes", ratio),
            ("memory_operations_percent", share))]
    return row + [Figure(program, "total_to_peak_objects", number(objects) / number(peak), "2002",
                         "Table 3 (total objects / max objects in use)", (objects, peak))]


FIGURES = [
    *_table3("175.vpr", ("3,897", "3,813", "44", "172,967", "124,636", "1.4", "0.1%")),
    *_table3("boxed-sim", ("52,203", "4,865", "15", "777,913", "301,987", "2.6", "0.2%")),
    *_table3("197.parser", ("9,334,022", "230,919", "38", "351,772,626", "3,207,529", "109.7", "41.8%")),
    *_table3("lcc", ("1,465,416", "92,696", "57", "83,217,416", "3,875,780", "21.5", "24.2%")),
    *_table3("176.gcc", ("9,065,285", "2,538,005", "54", "487,711,209", "112,753,774", "4.3", "6.7%")),
    *_table3("apache", ("149,275", "3,749", "208", "30,999,123", "754,492", "41", "0.1%")),
    *_table3("mudlle", ("1,687,079", "38,645", "29", "48,699,895", "662,964", "73.5", "33.7%")),
    *_table3("253.perlbmk", ("8,888,870", "5,813", "16", "144,514,214", "284,029", "508.8", "12.6%")),
    *_table3("164.gzip", ("1,307", "72", "6108", "7,983,304", "6,615,288", "1.2", "0.1%")),
    # 2026 Fig. 2's caption: 197.parser's peak live allocations on its ref input.
    Figure("197.parser", "peak_live_objects", 491_000, "2026", "Fig. 2", ("491k",)),
    # Vam Table 1 (run with DLmalloc on a 3 GHz Pentium 4): allocation rates and mean sizes.
    Figure("176.gcc", "objects_per_cpu_second", 373_000, "Vam 2005", "Table 1", ("373K",)),
    Figure("197.parser", "objects_per_cpu_second", 2_813_000, "Vam 2005", "Table 1", ("2813K",)),
    Figure("253.perlbmk", "objects_per_cpu_second", 129_000, "Vam 2005", "Table 1", ("129K",)),
    # Heap Layers Table 4: cfrac's row; its rate counts malloc and free (memory ops), two per object.
    Figure("cfrac", "total_objects", 10_890_166, "2001", "Table 4", ("10,890,166",)),
    Figure("cfrac", "total_bytes", 222_745_704, "2001", "Table 4", ("222,745,704",)),
    Figure("cfrac", "peak_live_bytes", 176_960, "2001", "Table 4", ("176,960",)),
    Figure("cfrac", "average_size", 20.45, "2001", "Table 4", ("20.45",)),
    Figure("cfrac", "objects_per_cpu_second", 1_207_862 / 2, "2001", "Table 4", ("1,207,862",)),
]

# Which paper program each stand-in is (workloads the papers give no statistics for are absent: geometry and
# mempool stand in for Blender's geometry nodes and sculpt, for which the 2026 paper prints no figures).
PROGRAM = {"router": "175.vpr", "boxed-sim": "boxed-sim", "parser": "197.parser", "compiler": "lcc",
           "scopes": "176.gcc", "server": "apache", "interp": "mudlle", "text": "253.perlbmk", "bigbuf": "164.gzip",
           "cfrac": "cfrac"}
NO_FIGURES = {"geometry": "the 2026 paper prints no allocation statistics for Blender's geometry nodes",
              "mempool": "the 2026 paper prints no allocation statistics for Blender's sculpt"}

# Why a stand-in is not within BOUND of a figure, one line each: (workload, statistic) -> reason. "Not
# calibrated" marks a gap the stand-in could close and has not yet (issue 30); the rest cannot be closed here.
_RUN_LENGTH = ("totals follow the run's length: the evaluation runs each cell for well under a second of CPU "
               "(every claim in 25 minutes), the paper's program ran {}")
_POINTERS = "the paper's program was 32-bit: its {} are pointers, twice as large on x86-64"
_CHURN = ("not calibrated: {} allocates {} objects in all (Table 3: {} of its time in memory operations); "
          "ours allocates per unit of work far more, so its region/naive findings are about more churn")
_SHARE = "not calibrated: {}; ours does far less work per object, so malloc and free take more of it"
_RATE = ("not calibrated: {}; ours does far less work per object (the paper's machine, a {}, explains at most "
         "about 4x)")
REASONS = {
    ("router", "total_objects"): _CHURN.format("175.vpr's router", "3,897", "0.1%"),
    ("router", "total_bytes"): _CHURN.format("175.vpr's router", "3,897", "0.1%"),
    ("router", "total_to_peak_objects"): _CHURN.format("175.vpr's router", "3,897", "0.1%"),
    ("router", "total_to_peak_bytes"): _CHURN.format("175.vpr's router", "3,897", "0.1%"),
    ("router", "memory_operations_percent"): _CHURN.format("175.vpr's router", "3,897", "0.1%"),
    ("router", "peak_live_objects"): "not calibrated: our per-net search keeps 3x 175.vpr's objects live at once",
    ("router", "peak_live_bytes"): "not calibrated: 3x the live objects, each with 64-bit pointers",
    ("boxed-sim", "total_objects"): _CHURN.format("boxed-sim", "52,203", "0.2%"),
    ("boxed-sim", "total_bytes"): _CHURN.format("boxed-sim", "52,203", "0.2%"),
    ("boxed-sim", "total_to_peak_objects"): _CHURN.format("boxed-sim", "52,203", "0.2%"),
    ("boxed-sim", "total_to_peak_bytes"): _CHURN.format("boxed-sim", "52,203", "0.2%"),
    ("boxed-sim", "memory_operations_percent"): _CHURN.format("boxed-sim", "52,203", "0.2%"),
    ("boxed-sim", "average_size"): _POINTERS.format("Event and Ball objects' links"),
    ("parser", "peak_live_bytes"): _POINTERS.format("dictionary nodes (left, right, spelling, formula)"),
    ("parser", "total_to_peak_bytes"): "the peak is the dictionary's, 3x larger in bytes with 64-bit pointers",
    ("parser", "objects_per_cpu_second"): ("the paper's rate is on a 3 GHz Pentium 4 (2005), with the allocator in "
                                           "a shared library; a 2020s core is several times faster"),
    ("scopes", "total_objects"): _RUN_LENGTH.format("24 s (Vam Table 1)"),
    ("scopes", "total_bytes"): _RUN_LENGTH.format("24 s (Vam Table 1)"),
    ("scopes", "peak_live_objects"): ("2.5M live objects (113 MB) would make Adv10 preallocate 25M objects per "
                                      "run; the 25-minute evaluation cannot pay for it"),
    ("scopes", "peak_live_bytes"): "follows the live objects (above): 113 MB is beyond the evaluation's budget",
    ("scopes", "total_to_peak_objects"): "the peak is 18x smaller than 176.gcc's (above), the total 4x",
    ("scopes", "total_to_peak_bytes"): "the peak is 13x smaller than 176.gcc's (above), the total 6x",
    ("scopes", "memory_operations_percent"): _SHARE.format("176.gcc does about 4,400 instructions per "
                                                           "allocation (Vam Table 1)"),
    ("scopes", "objects_per_cpu_second"): _RATE.format("176.gcc does about 4,400 instructions per allocation "
                                                       "(Vam Table 1: 40 billion for 9M)", "3 GHz Pentium 4"),
    ("server", "memory_operations_percent"): ("not calibrated: Apache spent its requests' time outside the "
                                              "allocator; ours serves them from memory, with 6x its objects each"),
    ("server", "total_objects"): "not calibrated: our requests allocate 6x Apache's objects per unit of work",
    ("server", "average_size"): "not calibrated: our request bodies and buffers are 8x Apache's mean object",
    ("server", "total_bytes"): "not calibrated: follows the objects and the mean size (above)",
    ("server", "peak_live_bytes"): "not calibrated: our keep-alive connections hold 16x Apache's live bytes",
    ("server", "total_to_peak_objects"): "not calibrated: follows the total objects (above)",
    ("server", "total_to_peak_bytes"): "not calibrated: follows the total objects and sizes (above)",
    ("interp", "total_objects"): "not calibrated: our programs allocate 6x mudlle's objects per unit of work",
    ("interp", "total_bytes"): "not calibrated: follows the objects (above)",
    ("interp", "peak_live_objects"): "not calibrated: our call depth and lists keep 5x fewer objects live than time.mud",
    ("interp", "total_to_peak_objects"): "not calibrated: 6x the total over 5x fewer live (above)",
    ("interp", "total_to_peak_bytes"): "not calibrated: 9x the total bytes over fewer live ones (above)",
    ("text", "memory_operations_percent"): _SHARE.format("253.perlbmk does about 21,000 instructions per "
                                                         "allocation (Vam Table 1)"),
    ("text", "total_objects"): _RUN_LENGTH.format("43 s (Vam Table 1)"),
    ("text", "peak_live_objects"): "not calibrated: our word hash keeps 3x perlbmk's live objects",
    ("text", "average_size"): "not calibrated: our strings are 3x perlbmk's 16-byte mean",
    ("text", "peak_live_bytes"): "not calibrated: 3x the live objects at 3x the size (above)",
    ("text", "total_to_peak_objects"): "a total cut by the run's length over 3x the live objects (above)",
    ("text", "total_to_peak_bytes"): "a total cut by the run's length over 4x the live bytes (above)",
    ("text", "objects_per_cpu_second"): _RATE.format("253.perlbmk does about 21,000 instructions per allocation "
                                                     "(Vam Table 1: 114 billion for 5.4M)", "3 GHz Pentium 4"),
    ("bigbuf", "memory_operations_percent"): ("not calibrated: our buffers are reallocated and replaced as they "
                                              "go, gzip's 1,307 objects mostly allocated once"),
    ("bigbuf", "total_objects"): "not calibrated: bigbuf models gzip's few large buffers, not its count",
    ("bigbuf", "peak_live_objects"): "not calibrated: bigbuf models gzip's few large buffers, not its count",
    ("bigbuf", "average_size"): "bigbuf's buffers are 4 KiB-8 MiB by design (the large-object path), gzip's 6 KB",
    ("bigbuf", "total_bytes"): "follows the buffer sizes (above)",
    ("bigbuf", "peak_live_bytes"): "follows the buffer sizes (above)",
    ("bigbuf", "total_to_peak_bytes"): "not calibrated: our buffers are reallocated and replaced, gzip's kept",
    ("cfrac", "total_objects"): _RUN_LENGTH.format("about 18 s (Heap Layers Table 4)"),
    ("cfrac", "total_bytes"): _RUN_LENGTH.format("about 18 s (Heap Layers Table 4)"),
    ("cfrac", "peak_live_bytes"): "not calibrated: our numbers to factor are smaller than cfrac's input's",
    ("cfrac", "objects_per_cpu_second"): _RATE.format("cfrac's multi-precision arithmetic is heavier per number",
                                                      "Pentium III of 2001"),
}


def figures_of(program: str) -> list:
    return [f for f in FIGURES if f.program == program]


def measured(profile: dict, cpu_seconds: Optional[float], memory_operations: Optional[float] = None) -> dict:
    """The stand-in's statistics from one profile row (profiles.csv), the CPU time of its naive cell and the
    percentage of its instructions in memory operations (memory_operations_percent)."""
    objects, peak = profile.get("total_objects"), profile.get("peak_live_objects")
    total_bytes, peak_bytes = profile.get("total_bytes"), profile.get("peak_live_bytes")
    return {"total_objects": objects, "peak_live_objects": peak,
            "total_to_peak_objects": objects / peak if objects and peak else None,
            "average_size": profile.get("average_size"), "total_bytes": total_bytes,
            "peak_live_bytes": peak_bytes,
            "total_to_peak_bytes": total_bytes / peak_bytes if total_bytes and peak_bytes else None,
            "objects_per_cpu_second": objects / cpu_seconds if objects and cpu_seconds else None,
            "memory_operations_percent": memory_operations}


# 2002 Table 3's "memory operations (% of runtime)": the time in malloc, free and their kin, measured there with
# a profiler on Windows XP. Here: callgrind's instructions inside those functions of the C library (inclusive:
# everything they call), over the whole run's; deterministic, and steady across scales once the run is past its
# start (docs/lab.md), so a small scale does.
MEMORY_OPERATIONS = {"malloc", "free", "calloc", "realloc", "reallocarray", "aligned_alloc", "posix_memalign",
                     "memalign", "valloc", "pvalloc"}
C_LIBRARY = "libc.so"


def memory_operations_percent(callgrind_out) -> float:
    """100 x the instructions inside the C library's allocation functions, called from outside it, over all
    the process's instructions, from a callgrind output file."""
    from . import valgrind
    total = valgrind.totals(callgrind_out)["Ir"]
    arcs = valgrind.calls_into(callgrind_out, C_LIBRARY)
    return 100 * sum(cost for name, (_, cost) in arcs.items() if name in MEMORY_OPERATIONS) / total


def measure_memory_operations(workload, scale: int, out_file, seed: int = 1,
                              timeout_s: Optional[float] = None) -> float:
    """The workload in naive mode on glibc at this scale under callgrind: memory_operations_percent."""
    from . import runner, valgrind
    invocation = workload.invocation("naive", scale, seed)
    env = runner.environment([], dict(invocation.env, STRATA_REAP_CHECK="0"))
    valgrind.measure("callgrind", invocation.argv, env, out_file, cwd=invocation.cwd, timeout_s=timeout_s)
    return memory_operations_percent(out_file)


@dataclass(frozen=True)
class Row:
    workload: str
    figure: Figure
    ours: Optional[float]
    reason: Optional[str]

    @property
    def ratio(self) -> Optional[float]:
        return self.ours / self.figure.value if self.ours is not None and self.figure.value else None

    @property
    def within(self) -> bool:
        return self.ratio is not None and 1 / BOUND <= self.ratio <= BOUND

    @property
    def held(self) -> bool:
        """Within bounds, or out of them for a stated reason (a figure we could not measure is neither)."""
        return self.ratio is not None and (self.within or self.reason is not None)


def rows(workload: str, ours: dict) -> list:
    """One row per published figure of the workload's program."""
    program = PROGRAM.get(workload)
    if program is None:
        return []
    return [Row(workload, f, ours.get(f.statistic), REASONS.get((workload, f.statistic))) for f in figures_of(program)]


def fmt(value: Optional[float]) -> str:
    if value is None:
        return "—"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def table_rows(calibration: list) -> list:
    """[stand-in (program), statistic, paper (where), ours, ratio, verdict] for the report and the command."""
    out = []
    for r in calibration:
        f = r.figure
        if r.ratio is None:
            verdict = "not measured"
        elif r.within:
            verdict = "within 2×"
        else:
            verdict = f"outside 2×: {r.reason}" if r.reason else "OUTSIDE 2×, no reason given"
        out.append([f"{r.workload} ({f.program})", STATISTICS[f.statistic], f"{fmt(f.value)} ({f.paper} {f.where})",
                    fmt(r.ours), "—" if r.ratio is None else f"{r.ratio:.2f}", verdict])
    return out


HEADER = ["stand-in (program)", "statistic", "paper (where)", "ours", "ours / paper", "calibrated"]


def measure(workload, scale: int, directory, seed: int = 1, timeout_s: Optional[float] = None) -> dict:
    """Profile the workload in naive mode at this scale (glibc) and time one plain run: its statistics."""
    from pathlib import Path
    from .workloads import profile, run
    prof = profile(workload, "naive", scale, seed, Path(directory) / f"{workload.name}.naive.{scale}.json",
                   timeout_s=timeout_s)
    timed = run(workload, "naive", scale, seed, "glibc", "Adv0", None, timeout_s)
    if timed["status"] != "ok":
        from .errors import LabError
        raise LabError(f"{workload.name} --mode naive --scale {scale}: {timed['status']} ({timed['exit_status']})")
    return measured(prof, timed["program_cpu_seconds"] or timed["cpu_seconds"])


def command(args) -> int:
    """`strata-lab calibrate`: every stand-in's statistics at the evaluation's scale against the papers'."""
    import sys
    import tempfile
    from pathlib import Path
    from .evaluation import configuration
    from .errors import LabError
    from .workloads import registry
    known = registry(args.workloads_dir)
    names = [n.strip() for n in args.only.split(",")] if args.only else [n for n in PROGRAM if n in known]
    for name in names:
        if name not in PROGRAM:
            raise LabError(f"--only: '{name}' stands in for no program the papers give figures for; "
                           f"known: {', '.join(PROGRAM)}")
    config = configuration.load(args.config, list(known))
    stats = [e for e in config.experiments if e.section == "statistics"]  # the scale the evaluation profiles at
    operations = config.bench.get("memory-operations", {})  # which stand-ins run under callgrind, at what scale
    calibration = []
    with tempfile.TemporaryDirectory(prefix="strata-calibrate-") as tmp:
        for name in names:
            w = known[name]
            scale = stats[0].scale_of(name, w.default_scale) if stats else max(1, round(w.default_scale * 0.1))
            print(f"strata-lab calibrate: {name} --mode naive --scale {scale}", file=sys.stderr)
            ours = measure(w, scale, tmp, timeout_s=args.timeout)
            if name in operations.get("workloads", []):
                at = operations.get("scale", 1)
                print(f"strata-lab calibrate: {name} --mode naive --scale {at} under callgrind", file=sys.stderr)
                ours["memory_operations_percent"] = measure_memory_operations(
                    w, at, Path(tmp) / f"callgrind.{name}.out", timeout_s=args.timeout and args.timeout * 100)
            calibration += rows(name, ours)
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row) + " |" for row in table_rows(calibration)]
    print("\n".join(lines))
    return 0 if all(r.held for r in calibration) else 1
