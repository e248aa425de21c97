"""strata-lab bench malloc: libstrata against glibc and the peer mallocs of
the allocator registry (jemalloc, tcmalloc, mimalloc, scudo, and mimalloc 3
and snmalloc once `make peers` has built them).

Each workload program (malloc_workloads.py lists them; built in
BUILD_DIR/bench/malloc) calls plain malloc/free; the allocator is chosen
by LD_PRELOAD, and the program checks that malloc really comes from it.
Rounds are interleaved: every round runs every contender once per workload,
in an order shuffled per round, so slow drifts of the machine hit all
contenders alike. Time is the program's own monotonic clock around its work;
ratios are medians of per-round ratios (each run paired with the reference
run of the same round). Memory is the program's peak RSS (its VmHWM) against
the peak live bytes it requested. --reference names the contender the
geometric means are taken against (default mimalloc3 if present, else
mimalloc). --programs: real programs (python3, gcc) whose peak RSS is
measured under each contender, a table of its own. Markdown tables.

--callgrind adds instruction counts (one run per contender on small sizes):
deterministic, unlike time, but blind to cache misses, faults, contention."""
import os
import random
from pathlib import Path

from .. import allocators, measurements, runner, valgrind
from ..errors import LabError, ProgramFailed
from . import common
from .malloc_programs import DEFAULT_PROGRAMS, PROGRAMS, measure_programs
from .malloc_workloads import PROGRAM_NAMES, WORKLOADS

CONTENDERS = ["glibc", "jemalloc", "tcmalloc", "mimalloc", "mimalloc3", "snmalloc", "scudo", "libstrata"]
REGISTRY_NAME = {"libstrata": "strata"}  # the contender's name in the allocator registry, where it differs

GOAL_PEERS = ["jemalloc", "tcmalloc", "mimalloc"]
RSS_SLACK = 1.05  # the goal: peak RSS at most the lowest peer's + 5%
# Issue 12's goals against mimalloc 3 on the independent suite: geometric
# means of the paired ratios, and no workload slower than 1.10x.
REFERENCE_TIME_GOAL = 0.95
REFERENCE_RSS_GOAL = 0.55
REFERENCE_WORST_TIME_GOAL = 1.10


def add_parser(sub) -> None:
    p = common.add_benchmark(sub, "malloc", "libstrata against glibc and the peer mallocs: time, peak RSS, "
                             "instructions", __doc__, command)
    p.add_argument("--quick", action="store_true", help="small sizes: checks the harness, figures mean little")
    p.add_argument("--workloads", default=",".join(WORKLOADS),
                   help="comma-separated subset, or 'all' (the default: %(default)s)")
    p.add_argument("--contenders", help="comma-separated subset of " + ",".join(CONTENDERS) + " (default: all "
                   "that are installed or built; mimalloc3 and snmalloc need make peers)")
    p.add_argument("--peers-dir", help="where tools/peers/build.sh (make peers) put mimalloc3 and snmalloc "
                                       "(default: $STRATA_LAB_PEERS_DIR, else build/peers)")
    p.add_argument("--reference", help="contender the geometric means are taken against "
                                       "(default: mimalloc3 if among the contenders, else mimalloc)")
    p.add_argument("--libstrata", help="libstrata.so to preload (default: the one the build made)")
    p.add_argument("--baseline", help="another libstrata.so (e.g. a copy from before a change), run as the "
                                      "extra contender 'baseline' in the same interleaved rounds")
    p.add_argument("--callgrind", action="store_true", help="also count instructions under callgrind")
    p.add_argument("--programs", default=",".join(DEFAULT_PROGRAMS),
                   help="real programs to time and measure under each contender (of " + ",".join(PROGRAMS)
                        + "), 'all' or 'none' (default: %(default)s)")
    p.add_argument("--seed", type=int, default=1, help="seed of the per-round shuffle")


# ---------------------------------------------------------------------------
# What runs: checked before anything does.

def resolve_contenders(args) -> dict:
    """contender name -> allocators.Allocator from --peers-dir, --libstrata, --contenders and --baseline
    (shared with bench pairs)."""
    if args.peers_dir:
        os.environ["STRATA_LAB_PEERS_DIR"] = str(Path(args.peers_dir).resolve())
    if args.libstrata:
        os.environ["STRATA_LAB_LIBSTRATA"] = str(Path(args.libstrata).resolve())
    contenders = common.available_allocators("--contenders", args.contenders, CONTENDERS,
                                             lambda name: REGISTRY_NAME.get(name, name))
    if args.baseline:
        contenders["baseline"] = allocators.resolve(args.baseline, "--baseline")
    return contenders


def choose(args) -> dict:
    """contender name -> allocators.Allocator, after every option is checked."""
    common.check_rounds(args.rounds, quick_allows_fewer=True, quick=args.quick)
    args.workloads = common.names("--workloads", ",".join(WORKLOADS) if args.workloads == "all" else args.workloads,
                                  list(WORKLOADS))
    args.programs = [] if args.programs == "none" else common.names(
        "--programs", ",".join(PROGRAMS) if args.programs == "all" else args.programs, list(PROGRAMS))
    contenders = resolve_contenders(args)
    args.contenders = list(contenders)
    if args.reference is not None and args.reference not in contenders:
        raise LabError(f"--reference: {args.reference!r} is not among the contenders ({', '.join(contenders)})")
    if args.reference is None:
        args.reference = next((n for n in ("mimalloc3", "mimalloc") if n in contenders), None)
    if args.callgrind:
        valgrind.require("--callgrind")
    for name in PROGRAM_NAMES + ["peak_rss"]:
        common.program(f"bench/malloc/{name}")
    return contenders


def program(name: str) -> Path:
    return common.program(f"bench/malloc/{name}")


# ---------------------------------------------------------------------------
# Running.

def parse_report(text: str) -> dict:
    for line in text.splitlines():
        if line.startswith("workload="):
            report = common.fields(line)
            for key in ("ops", "peak_live_bytes", "rss_start_bytes", "rss_peak_bytes", "rss_idle_bytes"):
                if key in report:
                    report[key] = int(report[key])
            report["elapsed_s"] = float(report["elapsed_s"])
            return report
    raise ProgramFailed(f"no report line in output: {text!r}")


def run_once(workload: str, allocator, quick: bool) -> dict:
    """One benchmark process: its report, plus its CPU time."""
    _, name, full_args, quick_args, _ = WORKLOADS[workload]
    result = common.run([program(name), *(quick_args if quick else full_args),
                         "--expect-malloc-from", allocator.malloc_from()], allocator.preload())
    report = parse_report(result.stdout)
    # The program reports its own VmHWM: ru_maxrss would include this Python
    # process, whose RSS at fork time Linux carries over exec into the child's.
    # CPU time of the whole process: less hurt than the clock when a shared
    # machine deschedules us, though it includes start-up and spinning.
    report["cpu_s"] = result.cpu_seconds
    if report["rss_peak_bytes"] == 0:
        raise ProgramFailed(f"{workload}: {name} could not read its VmHWM")
    return report


def measure(args, contenders: dict) -> common.Measurements:
    runs = common.Measurements()
    shuffle = random.Random(args.seed)
    for rnd in range(args.rounds):
        for workload in args.workloads:
            order = list(contenders)
            shuffle.shuffle(order)
            for name in order:
                report = run_once(workload, contenders[name], args.quick)
                runs.add(rnd, workload, name, report)
                common.progress(f"round {rnd + 1}/{args.rounds} {workload:6} {name:9} "
                                f"{report['elapsed_s']:8.3f} s  {report['rss_peak_bytes'] / 2**20:7.1f} MiB")
    common.check_same(runs, "checksum", "checksums differ between runs")
    return runs


# ---------------------------------------------------------------------------
# Tables.

def fmt_ratio(runs, workload: str, name: str, reference, key: str = "elapsed_s") -> str:
    if reference is None or not runs.values(workload, reference, key):
        return "n/a"
    return f"{runs.ratio(workload, name, reference, key):.2f}"


def time_memory_table(runs, workload: str, contenders: list, reference=None) -> list:
    # Against a reference other than the Debian mimalloc (mimalloc3): its own
    # time and peak RSS columns.
    extra = reference if reference not in (None, "glibc", "mimalloc") else None
    header = ["allocator", "median time (s)", "spread", "time / glibc", "time / mimalloc"] \
        + ([f"time / {extra}"] if extra else []) + ["CPU / glibc", "CPU / mimalloc"] \
        + ([f"CPU / {extra}"] if extra else []) + ["peak RSS (MiB)"] \
        + ([f"peak RSS / {extra}"] if extra else []) \
        + ["peak RSS / peak live", "RSS growth / peak live", "RSS after idle (MiB)"]
    rows = []
    for name in contenders:
        time = runs.summary(workload, name, "elapsed_s")
        idle = runs.values(workload, name, "rss_idle_bytes")
        live = runs.median(workload, name, "peak_live_bytes")
        rss = runs.median(workload, name, "rss_peak_bytes")
        start = runs.median(workload, name, "rss_start_bytes")
        rows.append([name, f"{time.median:.3f}",
                     f"{(time.high - time.low) / time.median * 100 if time.median else 0:.0f}%",
                     fmt_ratio(runs, workload, name, "glibc"), fmt_ratio(runs, workload, name, "mimalloc")]
                    + ([fmt_ratio(runs, workload, name, extra)] if extra else [])
                    + [fmt_ratio(runs, workload, name, "glibc", "cpu_s"),
                       fmt_ratio(runs, workload, name, "mimalloc", "cpu_s")]
                    + ([fmt_ratio(runs, workload, name, extra, "cpu_s")] if extra else []) + [f"{rss / 2**20:.1f}"]
                    + ([fmt_ratio(runs, workload, name, extra, "rss_peak_bytes")] if extra else [])
                    + [f"{rss / live:.2f}", f"{(rss - start) / live:.2f}",
                       f"{runs.median(workload, name, 'rss_idle_bytes') / 2**20:.1f}" if idle else "-"])
    first = contenders[0]
    ops = next(r["ops"] for r in runs.rows if r["workload"] == workload)
    return [f"### {workload}: {WORKLOADS[workload][0]}", ""] + common.table(header, rows) + [
        "", f"peak live requested: {runs.median(workload, first, 'peak_live_bytes') / 2**20:.1f} MiB; "
            f"operations: {ops}", ""]


def lowest_peer_ratio(runs, workload: str, key: str) -> float:
    """Median over rounds of libstrata's value / the lowest of the goal peers' in that round."""
    mine = runs.by_round(workload, "libstrata", key)
    peers = [runs.by_round(workload, p, key) for p in GOAL_PEERS]
    return measurements.summarize(v / min(p[r] for p in peers) for r, v in mine.items()).median


def goal_table(args, runs) -> list:
    """Issue 12's goals, per workload: faster than each peer, peak RSS <= lowest peer's + 5%."""
    if "libstrata" not in args.contenders or any(p not in args.contenders for p in GOAL_PEERS):
        return []
    with_baseline = "baseline" in args.contenders
    header = ["workload", "time / jemalloc", "time / tcmalloc", "time / mimalloc", "time / glibc",
              "peak RSS / lowest peer", "RSS after idle / lowest peer", "time goal", "RSS goal"] \
        + (["time / baseline", "peak RSS / baseline"] if with_baseline else [])
    rows = []
    for workload in args.workloads:
        times = [runs.ratio(workload, "libstrata", p, "elapsed_s") for p in GOAL_PEERS]
        rss = lowest_peer_ratio(runs, workload, "rss_peak_bytes")
        has_idle = bool(runs.values(workload, "libstrata", "rss_idle_bytes"))
        idle = lowest_peer_ratio(runs, workload, "rss_idle_bytes") if has_idle else None
        rss_ok = rss <= RSS_SLACK and (idle is None or idle <= RSS_SLACK)
        rows.append([workload] + [f"{t:.2f}" for t in times]
                    + [fmt_ratio(runs, workload, "libstrata", "glibc" if "glibc" in args.contenders else None),
                       f"{rss:.2f}", f"{idle:.2f}" if idle is not None else "-",
                       "met" if max(times) < 1 else "missed", "met" if rss_ok else "missed"]
                    + ([fmt_ratio(runs, workload, "libstrata", "baseline"),
                        fmt_ratio(runs, workload, "libstrata", "baseline", "rss_peak_bytes")] if with_baseline else []))
    return ["### libstrata against the goals (paired ratios, medians over rounds)", ""] + common.table(
        header, rows, "lrrrrrrll" + ("rr" if with_baseline else "")) + [""]


def reference_ratios(args, runs, name: str) -> dict:
    """workload -> (paired time ratio, paired peak-RSS ratio) of `name` against the reference."""
    return {w: (runs.ratio(w, name, args.reference, "elapsed_s"),
                runs.ratio(w, name, args.reference, "rss_peak_bytes")) for w in args.workloads}


def reference_table(args, runs) -> list:
    """Every contender's geometric means over the workloads against the
    reference, then libstrata per workload against issue 12's targets."""
    ref = args.reference
    if ref is None:
        return []
    rows = []
    for name in args.contenders:
        ratios = reference_ratios(args, runs, name)
        slowest = max(ratios, key=lambda w: ratios[w][0])
        rows.append([name, f"{common.geomean(t for t, _ in ratios.values()):.2f}",
                     f"{common.geomean(m for _, m in ratios.values()):.2f}", f"{slowest} {ratios[slowest][0]:.2f}"])
    lines = [f"### geometric means over the {len(args.workloads)} workloads, against {ref} "
             "(paired ratios, medians over rounds; < 1 is better)", ""]
    lines += common.table(["allocator", "time geomean", "peak RSS geomean", "slowest workload (time ratio)"],
                          rows, "lrrl") + [""]
    if "libstrata" not in args.contenders or ref == "libstrata":
        return lines
    ratios = reference_ratios(args, runs, "libstrata")
    time_gm = common.geomean(t for t, _ in ratios.values())
    rss_gm = common.geomean(m for _, m in ratios.values())
    too_slow = [w for w, (t, _) in ratios.items() if t > REFERENCE_WORST_TIME_GOAL]
    against = "" if ref == "mimalloc3" else f" (they are set against mimalloc 3; here against {ref})"
    lines += [f"libstrata against issue 12's targets{against}: "
              f"time geomean {time_gm:.2f} (target <= {REFERENCE_TIME_GOAL}: "
              f"{'met' if time_gm <= REFERENCE_TIME_GOAL else 'missed'}), "
              f"peak RSS geomean {rss_gm:.2f} (target <= {REFERENCE_RSS_GOAL}: "
              f"{'met' if rss_gm <= REFERENCE_RSS_GOAL else 'missed'}), "
              f"workloads slower than {REFERENCE_WORST_TIME_GOAL:.2f}x: {', '.join(too_slow) or 'none'}.", ""]
    lines += common.table(["workload", f"libstrata time / {ref}", f"libstrata peak RSS / {ref}",
                           f"time <= {REFERENCE_WORST_TIME_GOAL:.2f}x"],
                          [[w, f"{t:.2f}", f"{m:.2f}", "yes" if t <= REFERENCE_WORST_TIME_GOAL else "no"]
                           for w, (t, m) in ratios.items()], "lrrl")
    return lines + [""]


def programs_table(args, runs) -> list:
    """Time and peak RSS of the real programs against glibc (else the
    reference): paired ratios, median [min-max] over the rounds, and their
    geometric means; then the same geometric means against the reference."""
    if not args.programs:
        return []
    base = "glibc" if "glibc" in args.contenders else args.reference
    if base is None:
        return []
    others = [c for c in args.contenders if c != base]
    lines = ["### real programs: time and peak RSS (the process tree's largest process)", "",
             f"Paired ratios to {base}, median [min-max] over {args.rounds} rounds; < 1 is better. "
             "Every program's output is the same under every allocator (checked).", ""]
    for key, what, unit, scale in (("elapsed_s", "time", "s", 1), ("rss_peak_bytes", "peak RSS", "MiB", 2**20)):
        rows, per = [], {c: [] for c in others}
        for name in args.programs:
            cells = [name, f"{runs.median(name, base, key) / scale:.2f} {unit}"]
            for c in others:
                paired = runs.paired(name, c, base, key)
                per[c].append(paired.median)
                cells.append(f"{paired.median:.2f} [{paired.low:.2f}-{paired.high:.2f}]")
            rows.append(cells)
        rows.append([f"geometric mean / {base}", ""] + [f"**{common.geomean(per[c]):.2f}**" for c in others])
        ref = args.reference
        if ref and ref != base and ref in args.contenders:
            rows.append([f"geometric mean / {ref}", ""] + [
                f"{common.geomean(runs.ratio(n, c, ref, key) for n in args.programs):.2f}" for c in others])
        lines += [f"#### {what}", ""] + common.table(["program", f"{base} ({unit})"] + [f"{c} / {base}" for c in others],
                                                    rows, "lr" + "r" * len(others)) + [""]
    return lines + [f"- {n}: {PROGRAMS[n].description}" for n in args.programs] + [""]


def standing_table(args, runs, program_runs) -> list:
    """Where libstrata stands: its paired time and peak-RSS ratios to the
    reference and to glibc on every workload and real program, with the
    geometric mean of each part (docs/benchmarks-malloc.md opens with it)."""
    bases = [b for b in dict.fromkeys([args.reference, "glibc"]) if b and b in args.contenders and b != "libstrata"]
    if "libstrata" not in args.contenders or not bases:
        return []
    header = ["", *[f"{what} / {b}" for b in bases for what in ("time", "peak RSS")]]
    rows = []
    for part, measured, names in (("standard suite", runs, args.workloads),
                                  ("real programs", program_runs, args.programs)):
        if not names:
            continue
        ratios = {n: [measured.ratio(n, "libstrata", b, key) for b in bases for key in ("elapsed_s", "rss_peak_bytes")]
                  for n in names}
        rows += [[n, *[f"{r:.2f}" for r in ratios[n]]] for n in names]
        rows.append([f"**geometric mean, {part}**",
                     *[f"**{common.geomean(r[i] for r in ratios.values()):.2f}**" for i in range(2 * len(bases))]])
    return ["### where libstrata stands (paired ratios, medians over rounds; < 1 is better)", ""] + common.table(
        header, rows, "l" + "r" * (len(header) - 1)) + [""]


def callgrind_table(args, contenders: dict) -> list:
    ref = args.reference
    per_reference = {name: [] for name in contenders}  # instruction ratios against the reference
    rows = []
    for workload in args.workloads:
        _, name_of_program, _, _, cg_args = WORKLOADS[workload]
        counts = {}
        for name, allocator in contenders.items():
            argv = [str(program(name_of_program)), *cg_args, "--expect-malloc-from", allocator.malloc_from()]
            try:
                counts[name] = valgrind.instructions(argv, runner.environment(allocator.preload(), {}))
            except LabError as error:
                # snmalloc reserves a pagemap for the whole address space at
                # start-up, and scudo large regions for its size classes, more
                # than valgrind lets a process map: they abort there. One
                # contender that cannot run under valgrind is a gap in the
                # table, not the end of the report.
                if name == "libstrata":
                    raise ProgramFailed(str(error)) from None
                counts[name] = None
                common.progress(f"callgrind {workload:6} {name:9} FAILED: {str(error).splitlines()[0]}")
                continue
            common.progress(f"callgrind {workload:6} {name:9} {counts[name]:,} Ir")
        glibc = counts.get("glibc")
        rows.append([workload] + ["fails under valgrind" if c is None else
                                  f"{c / 1e6:.0f} M" + (f" ({c / glibc:.2f}x glibc)" if glibc else "")
                                  for c in counts.values()])
        if counts.get(ref):
            for name, c in counts.items():
                if c is not None:
                    per_reference[name].append(c / counts[ref])
    if ref in contenders:
        rows.append([f"geomean / {ref}"] + [f"{common.geomean(v):.2f}" if v else "-"
                                            for v in per_reference.values()])
    return ["### instructions (callgrind, small sizes, whole process)", ""] + common.table(
        ["workload"] + list(contenders), rows) + [""]


def command(args) -> int:
    contenders = choose(args)
    started = common.started()
    runs = measure(args, contenders)
    program_runs = measure_programs(args, contenders)
    out = ["## Malloc benchmarks", "",
           f"`{common.command_line()}` - {started}, {common.machine()}, {args.rounds} interleaved rounds"
           + (" (--quick)" if args.quick else ""), "",
           "Time: median of the program's own clock; ratios: median of per-round ratios "
           "(< 1 is faster). Spread: (max - min) / median of the time over the rounds. "
           "CPU: user + system time of the process (wait4), paired ratios likewise. "
           "Memory: peak RSS of the process; RSS growth = peak RSS - RSS before the work.", ""]
    out += standing_table(args, runs, program_runs)
    out += goal_table(args, runs)
    out += reference_table(args, runs)
    for workload in args.workloads:
        out += time_memory_table(runs, workload, args.contenders, args.reference)
    out += programs_table(args, program_runs)
    for name, allocator in contenders.items():
        out.append(f"- {name}: {allocator.library or 'no LD_PRELOAD (glibc malloc)'}")
    out.append("")
    if args.callgrind:
        out += callgrind_table(args, contenders)
    common.emit(out)
    return 0
