"""strata-lab bench shims: the overhead of the lab's preload shims (profiler,
trace recorder) on an allocation-heavy program: lab_alloc_patterns churn,
3 million malloc/free, which reports its own loop time (ns=...).

For each allocator, every round runs the plain program and each shim back to
back, in an order that rotates from round to round; each shim run is paired
with the plain run of the same round; reported: the median time of each and
the median of the paired ratios, with their min and max."""
import tempfile

from .. import allocators, paths
from . import common

SHIMS = ["profile", "trace"]
DEFAULT_ALLOCATORS = ["glibc", "jemalloc"]
PROGRAM = "tests/lab/lab_alloc_patterns"


def add_parser(sub) -> None:
    p = common.add_benchmark(sub, "shims", "the overhead of the lab's profiler and trace recorder",
                             __doc__, command)
    p.add_argument("--allocators", help="comma-separated allocators under the shims (default: "
                                        f"{','.join(DEFAULT_ALLOCATORS)}, those installed)")
    p.add_argument("--shims", default=",".join(SHIMS), help="comma-separated shims to measure (default: %(default)s)")


def loop_ns(exe, preload: list, variables: dict) -> int:
    return int(common.fields(common.run([exe, "churn"], preload, variables).stdout)["ns"])


def command(args) -> int:
    common.check_rounds(args.rounds)
    chosen_shims = common.names("--shims", args.shims, SHIMS)
    chosen = common.available_allocators("--allocators", args.allocators,
                                         DEFAULT_ALLOCATORS if args.allocators is None else allocators.KNOWN)
    exe = common.program(PROGRAM)
    shims = {name: str(paths.shim(name)) for name in chosen_shims}
    contenders = ["plain"] + chosen_shims
    out = [f"## Lab shim overhead: lab_alloc_patterns churn (3M malloc/free), {args.rounds} rounds, medians", ""]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        outputs = {"STRATA_LAB_PROFILE_OUT": f"{tmp}/p.json", "STRATA_LAB_TRACE_OUT": f"{tmp}/t.bin"}
        for name, allocator in chosen.items():
            runs = common.Measurements()
            for rnd, order in common.rotated_rounds(args.rounds, contenders):
                for c in order:
                    preload = ([shims[c]] if c in shims else []) + allocator.preload()
                    runs.add(rnd, name, c, {"ns": loop_ns(exe, preload, outputs)})
            rows.append([name, "plain", f"{runs.median(name, 'plain', 'ns') / 1e6:.1f}", "1.00", "", ""])
            for shim in chosen_shims:
                ratio = runs.paired(name, shim, "plain", "ns")
                rows.append([name, shim, f"{runs.median(name, shim, 'ns') / 1e6:.1f}", f"{ratio.median:.2f}",
                             f"{ratio.low:.2f}", f"{ratio.high:.2f}"])
    common.emit(out + common.table(["allocator", "run", "median loop time (ms)", "paired ratio to plain (median)",
                                    "min", "max"], rows, "llrrrr"))
    return 0
