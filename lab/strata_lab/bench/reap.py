"""strata-lab bench reap: region workload timings, drag peak memory and,
optionally, callgrind instruction counts and cachegrind cache misses of the
reap against other region allocators (issue 3), as Markdown tables.

Each contender is its own program (BUILD_DIR/bench/reap/strata-bench-reap-NAME).
Timing: every round runs each contender once, in a shuffled order, with a run
of the baseline (inline: the bump region written inline in the program)
between any two, so each run is paired with its neighbouring baseline runs; a
round's ratio is the run's time over the mean of its two neighbouring
baseline runs. Reported: per-contender median time, median of the per-round
ratios to the baseline and to reap (same round), and their min..max spread.
--cachegrind: simulated D1 and LL misses of the region workload."""
import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from .. import valgrind
from ..errors import LabError
from ..paths import build_dir
from . import common

CONTENDERS = ["inline", "inline8", "bump", "reap", "sized-reap", "emulator", "pmr", "mimalloc", "talloc", "apr"]
BASELINE = "inline"
DESCRIPTIONS = {
    "inline": "bump region written inline in the program (64 KiB chunks kept across resets, reset = rewind): the baseline",
    "inline8": "the same inline region rounding sizes to 8 bytes, not 16: the baseline a sized reap is fair against",
    "bump": "plain bump-pointer region behind an out-of-line call (chunks kept across clear)",
    "reap": "strata reap (strata_reap_malloc / strata_reap_clear)",
    "sized-reap": "strata sized reap (strata_reap_malloc_sized / strata_reap_free_sized: no tag, 8-byte granules); "
                  "compare it with inline8",
    "emulator": "region emulator over glibc malloc (paper §5.1)",
    "pmr": "std::pmr::monotonic_buffer_resource over new/delete, release()",
    "mimalloc": "mimalloc heap: mi_heap_malloc, mi_heap_destroy + mi_heap_new",
    "talloc": "talloc context: talloc_size, talloc_free(ctx) + talloc_new",
    "apr": "APR pool: apr_palloc, apr_pool_clear",
}
# Region workload shapes: objects per round x rounds (same total allocations).
SHAPES = {
    "large": (1_000_000, 10),  # compiler-phase-like: a region grows to ~40 MB, then clear
    "small": (4_000, 2_500),   # request-like: a region of ~150 KB, cleared very often
}
QUICK_SHAPES = {"large": (200_000, 5), "small": (2_000, 500)}
DRAG_ARGS = ["--phases", "40", "--objects", "50000"]
QUICK_DRAG_ARGS = ["--phases", "10", "--objects", "20000"]
DRAG_WITHOUT_FREE = ("reap", "emulator", "mimalloc", "talloc")  # also run with --no-free
CALLGRIND_OBJECTS, CALLGRIND_ROUNDS = 100_000, 3
# Cachegrind: both shapes, fewer rounds (it simulates every access).
CACHEGRIND_SHAPES = {"large": (1_000_000, 2), "small": (4_000, 250)}
CACHEGRIND_CONTENDERS = ["inline", "inline8", "bump", "reap", "sized-reap", "mimalloc", "apr"]
# The reap's checked mode (STRATA_REAP_CHECK=1, or Valgrind) records every
# object; every run here measures the normal, unchecked reap.
VARIABLES = {"STRATA_REAP_CHECK": "0"}
SEED = 20020101


def add_parser(sub) -> None:
    p = common.add_benchmark(sub, "reap", "reaps against other region allocators: time, drag, instructions, misses",
                             __doc__, command)
    p.add_argument("--shapes", default="large,small", help="region shapes: large, small (default both)")
    p.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                   help="process CPU time (default; immune to being descheduled) or wall time")
    p.add_argument("--contenders", default=",".join(CONTENDERS), help="comma-separated subset")
    p.add_argument("--callgrind", action="store_true", help="also count instructions with callgrind")
    p.add_argument("--callgrind-dir", help="keep the callgrind profiles here")
    p.add_argument("--cachegrind", action="store_true", help="also count D1/LL misses with cachegrind")
    p.add_argument("--no-time", action="store_true", help="skip the timed region workload")
    p.add_argument("--no-drag", action="store_true", help="skip the drag workload")
    p.add_argument("--drag-runs", type=int, default=3, help="fresh processes per drag configuration (default 3)")
    p.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run, figures not meaningful)")


def binary(name: str) -> Path:
    return build_dir() / "bench" / "reap" / f"strata-bench-reap-{name}"


def run_json(name: str, *arguments) -> list:
    """Runs a contender program; its JSON lines as dicts."""
    out = common.run([binary(name), *arguments], variables=VARIABLES).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def region_time(name: str, shape: tuple, clock: str) -> float:
    objects, rounds = shape
    return run_json(name, "region", "--objects", objects, "--rounds", rounds)[0][clock + "_s"]


def spread(summary) -> str:
    return f"{summary.low:.2f}..{summary.high:.2f}"


def time_shape(names: list, shape_name: str, shape: tuple, rounds: int, clock: str) -> list:
    """Interleaved, paired timing of one shape: Markdown lines."""
    others = [n for n in names if n != BASELINE]
    runs = common.Measurements()
    for rnd, order in common.shuffled_rounds(rounds, others, SEED):
        base = [region_time(BASELINE, shape, clock)]
        for name in order:
            t = region_time(name, shape, clock)
            base.append(region_time(BASELINE, shape, clock))
            # paired with its two neighbouring baseline runs
            runs.add(rnd, shape_name, name, {"seconds": t, "to_baseline": t / ((base[-2] + base[-1]) / 2)})
        runs.add(rnd, shape_name, BASELINE, {"seconds": statistics.median(base)})
    allocations = shape[0] * shape[1]
    rows = []
    for name in names:
        med = runs.median(shape_name, name, "seconds")
        to_base = runs.summary(shape_name, name, "to_baseline")
        rb = "1.00 (baseline)" if name == BASELINE else f"{to_base.median:.3f} ({spread(to_base)})"
        if name == "reap":
            rr = "1.00"
        elif "reap" in names:
            to_reap = runs.paired(shape_name, name, "reap", "seconds")
            rr = f"{to_reap.median:.3f} ({spread(to_reap)})"
        else:
            rr = "n/a"
        rows.append([name, f"{med * 1e3:.1f}", f"{med * 1e9 / allocations:.2f}", rb, rr])
    return [f"### Region workload, shape `{shape_name}`: {shape[0]} objects of 8–64 bytes per round, "
            f"{shape[1]} rounds ({allocations} allocations), {clock} time, {rounds} rounds", ""] + common.table(
        ["contender", "median ms", "ns/alloc", "ratio to inline (median, min..max)",
         "ratio to reap (median, min..max)"], rows) + [""]


def fmt_bytes(n) -> str:
    return "n/a" if n is None else f"{n / 1048576.0:.2f} MiB"


def drag_table(names: list, drag_args: list, runs: int) -> list:
    """Each configuration in fresh processes (peak RSS is per process); RSS
    varies by a few pages from run to run, so the median of `runs` is shown."""
    rows, ideal = [], None
    for name in names:
        for extra in ([[], ["--no-free"]] if name in DRAG_WITHOUT_FREE else [[]]):
            results = [run_json(name, "drag", *drag_args, *extra)[0] for _ in range(runs)]
            for r in results:
                ideal = r["peak_live_bytes"] if ideal is None else ideal
                if r["peak_live_bytes"] != ideal or r["peak_held_bytes"] != results[0]["peak_held_bytes"]:
                    raise LabError("drag runs disagree on live or held bytes (not deterministic?)")
            rows.append(dict(results[0], peak_rss_added=statistics.median(r["peak_rss_added"] for r in results)))
    lines = [f"### Drag workload ({' '.join(drag_args)}): {rows[0]['allocated_bytes']} bytes allocated in all; "
             f"ideal = peak live bytes = {fmt_bytes(ideal)}; RSS: median of {runs} runs", ""]
    lines += common.table(
        ["contender", "frees objects", "peak held (own stats)", "held / ideal", "peak RSS added", "RSS / ideal"],
        [["ideal (peak live bytes)", "—", fmt_bytes(ideal), "1.00", "—", "—"]]
        + [[r["contender"], "yes" if r["free"] else "no (region)", fmt_bytes(r["peak_held_bytes"]),
            "n/a" if r["peak_held_bytes"] is None else f"{r['peak_held_bytes'] / ideal:.2f}",
            fmt_bytes(r["peak_rss_added"]), f"{r['peak_rss_added'] / ideal:.2f}"] for r in rows], "llrrrr")
    return lines + [""]


def _env() -> dict:
    return dict(os.environ, **VARIABLES)


def region_argv(name: str, objects: int, rounds: int) -> list:
    return [str(binary(name)), "region", "--objects", str(objects), "--rounds", str(rounds)]


def callgrind_table(names: list, keep_dir) -> list:
    """Instructions per allocation: (run with N objects - run with 0) / allocations."""
    out_dir = Path(keep_dir or tempfile.mkdtemp(prefix="strata-bench-reap-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    allocations = CALLGRIND_OBJECTS * CALLGRIND_ROUNDS
    per_alloc = {}
    for name in names:
        full = valgrind.instructions(region_argv(name, CALLGRIND_OBJECTS, CALLGRIND_ROUNDS), _env(),
                                     out_dir / f"callgrind.{name}.out")
        empty = valgrind.instructions(region_argv(name, 0, CALLGRIND_ROUNDS), _env(),
                                      out_dir / f"callgrind.{name}.empty.out")
        per_alloc[name] = (full - empty) / allocations
    lines = ["### Instructions (callgrind, `region --objects %d --rounds %d`): per allocation, including the touch "
             "and the amortised clear" % (CALLGRIND_OBJECTS, CALLGRIND_ROUNDS), ""]
    lines += common.table(["contender", "Ir / alloc", "ratio to inline"],
                          [[n, f"{per_alloc[n]:.1f}", f"{per_alloc[n] / per_alloc[BASELINE]:.3f}"
                            if BASELINE in per_alloc else "nan"] for n in names])
    lines += ["", "All runs have `STRATA_REAP_CHECK=0`: under Valgrind the reap would otherwise switch to "
                  "checked mode."]
    if keep_dir:
        lines.append(f"Callgrind profiles kept in `{keep_dir}` (`callgrind_annotate FILE`).")
    else:
        shutil.rmtree(out_dir)
    return lines + [""]


def cachegrind_table(names: list) -> list:
    """Misses per allocation of the region workload: (run with N objects - run with 0) / allocations."""
    lines = []
    for _shape, (objects, rounds) in CACHEGRIND_SHAPES.items():
        allocations = objects * rounds
        rows = {}
        for name in [n for n in CACHEGRIND_CONTENDERS if n in names]:
            full = valgrind.cache_misses(region_argv(name, objects, rounds), _env())
            empty = valgrind.cache_misses(region_argv(name, 0, rounds), _env())
            rows[name] = {k: (full[k] - empty[k]) / allocations for k in full}
        base = rows.get(BASELINE)

        def ratio(r, k):
            return f"{r[k] / base[k]:.3f}" if base and base[k] > 0 else "n/a"
        lines += [f"### Cache misses (cachegrind, `region --objects {objects} --rounds {rounds}`): "
                  "per allocation, workload included", ""]
        lines += common.table(
            ["contender", "Ir / alloc", "D1 misses / alloc", "ratio to inline", "LL misses / alloc", "ratio to inline"],
            [[n, f"{r['Ir']:.2f}", f"{r['D1']:.4f}", ratio(r, "D1"), f"{r['LL']:.4f}", ratio(r, "LL")]
             for n, r in rows.items()])
        lines.append("")
    return lines + ["D1/LL: simulated first-level data and last-level cache misses (reads + writes) of valgrind's "
                    "cache model for this machine; `STRATA_REAP_CHECK=0` as for callgrind.", ""]


def command(args) -> int:
    common.check_rounds(args.rounds)
    common.check_positive("--drag-runs", args.drag_runs)
    wanted = common.names("--contenders", args.contenders, CONTENDERS)
    shapes = QUICK_SHAPES if args.quick else SHAPES
    shape_names = common.names("--shapes", args.shapes, list(shapes))
    if args.callgrind or args.cachegrind:
        valgrind.require("--callgrind" if args.callgrind else "--cachegrind")
    names = [n for n in CONTENDERS if n in wanted and os.access(binary(n), os.X_OK)]
    missing = [n for n in wanted if n not in names]
    if BASELINE not in names:
        common.program(f"bench/reap/strata-bench-reap-{BASELINE}")  # the error says how to build it

    out = ["## strata reap benchmarks", "",
           f"`{common.command_line()}` — {common.started()}, {common.machine()}", ""]
    if missing:
        out += [f"Not built, left out: {', '.join(missing)}", ""]
    out += common.table(["contender", "what it is"], [[n, DESCRIPTIONS[n]] for n in names], "ll") + [""]
    common.emit(out)
    if not args.no_time:
        for s in shape_names:
            common.emit(time_shape(names, s, shapes[s], args.rounds, args.clock))
    if not args.no_drag:
        common.emit(drag_table(names, QUICK_DRAG_ARGS if args.quick else DRAG_ARGS, args.drag_runs))
    if args.callgrind:
        common.emit(callgrind_table(names, args.callgrind_dir))
    if args.cachegrind:
        common.emit(cachegrind_table(names))
    return 0
