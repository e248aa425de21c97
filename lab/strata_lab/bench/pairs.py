"""strata-lab bench pairs: instructions per malloc/free pair (issue 20's goal:
libstrata at or below mimalloc 3), counted by callgrind: deterministic but for
the allocator's own housekeeping on the clock (docs/benchmarks-malloc.md).

Each workload program of bench/malloc runs under each contender (LD_PRELOAD)
at two sizes, n and 2n of its scaled option, under valgrind's callgrind. From
each profile it takes the calls from the program into the preloaded library,
entry point by entry point, with their inclusive instruction counts: what the
allocator costs the program, slow paths, system calls' user side and all,
but not the program's own work. The difference between the two sizes
cancels start-up, the first faults of a fresh heap and the final frees of a
fixed window; instructions per pair = that difference over the difference in
allocation calls (malloc, calloc, new, aligned forms; realloc counts in the
instructions, not in the pairs). Markdown table on stdout.

--keep DIR keeps the profiles (with --dump-instr=yes) for callgrind_annotate."""
import tempfile
from pathlib import Path

from .. import runner, valgrind
from ..errors import LabError
from . import common, malloc
from .malloc_workloads import WORKLOADS

# workload -> (option scaled to n and 2n, n, other arguments replacing the
# workload's callgrind ones). cachescratch writes each object fewer times:
# the writes are the program's, and only slow callgrind down.
SCALED = {
    "simple": ("--ops", 200000, {}),
    "churn": ("--ops", 300000, {}),
    "cachescratch": ("--iterations", 20000, {"--repetitions": "10"}),
    "smallmix": ("--ops", 200000, {}),
    "xfree": ("--ops", 20000, {}),
    "threadsmall": ("--ops", 50000, {}),
    "larson": ("--ops", 20000, {}),
    "prodcons": ("--ops", 100000, {}),
}
DEFAULT_WORKLOADS = ["simple", "churn", "cachescratch", "smallmix", "xfree"]
DEFAULT_CONTENDERS = ["libstrata", "mimalloc3"]
ALLOCATION_CALLS = {"malloc", "calloc", "aligned_alloc", "posix_memalign", "memalign", "valloc", "pvalloc",
                    "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t"}


def add_parser(sub) -> None:
    p = common.add_benchmark(sub, "pairs", "instructions per malloc/free pair under callgrind (libstrata "
                             "against mimalloc 3)", __doc__, command)
    p.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS),
                   help="comma-separated subset of " + ",".join(SCALED) + " (default: %(default)s)")
    p.add_argument("--contenders", default=",".join(DEFAULT_CONTENDERS),
                   help="comma-separated subset of " + ",".join(malloc.CONTENDERS) + " (default: %(default)s)")
    p.add_argument("--reference", default="mimalloc3", help="contender the ratios are taken against")
    p.add_argument("--peers-dir", help="where make peers put mimalloc3 and snmalloc "
                                       "(default: $STRATA_LAB_PEERS_DIR, else build/peers)")
    p.add_argument("--libstrata", help="libstrata.so to preload (default: the one the build made)")
    p.add_argument("--baseline", help="another libstrata.so (e.g. one from before a change), the extra "
                                      "contender 'baseline'")
    p.add_argument("--keep", help="directory to keep the callgrind profiles in (with --dump-instr=yes)")


def choose(args) -> dict:
    """contender name -> allocators.Allocator, after every option is checked."""
    args.workloads = common.names("--workloads", args.workloads, list(SCALED))
    contenders = malloc.resolve_contenders(args)
    if args.reference not in contenders:
        raise LabError(f"--reference: {args.reference!r} is not among the contenders ({', '.join(contenders)})")
    if "glibc" in contenders:
        raise LabError("--contenders: glibc is not preloaded, so its calls cannot be told from libc's own")
    valgrind.require("bench pairs")
    return contenders


def workload_argv(workload: str, n: int) -> list:
    """The program and its arguments at size n of the scaled option."""
    _, program, _, _, callgrind_args = WORKLOADS[workload]
    option, _, overrides = SCALED[workload]
    values = dict(zip(callgrind_args[::2], callgrind_args[1::2]))
    values.update(overrides)
    values[option] = str(n)
    return [str(malloc.program(program))] + [item for pair in values.items() for item in pair]


def allocator_cost(argv: list, allocator, out_file: Path) -> dict:
    """{"Ir", "allocations", "frees", "malloc_Ir", "free_Ir"}: what the program's
    calls into the allocator cost in one run under callgrind."""
    argv = argv + ["--expect-malloc-from", allocator.malloc_from()]
    valgrind.measure("callgrind", argv, runner.environment(allocator.preload(), {}), out_file,
                     options=["--dump-instr=yes"])
    arcs = valgrind.calls_into(out_file, str(allocator.library))
    allocations = sum(calls for name, (calls, _) in arcs.items() if name in ALLOCATION_CALLS)
    return {"Ir": sum(cost for _, cost in arcs.values()), "allocations": allocations,
            "frees": arcs.get("free", (0, 0))[0], "malloc_Ir": arcs.get("malloc", (0, 0))[1],
            "malloc_calls": arcs.get("malloc", (0, 0))[0], "free_Ir": arcs.get("free", (0, 0))[1]}


def per_pair(small: dict, large: dict) -> dict:
    """Instructions per pair, per malloc and per free, from the difference of
    two runs of one workload at two sizes."""
    pairs = large["allocations"] - small["allocations"]
    if pairs <= 0:
        raise LabError(f"the larger run made {pairs} more allocations than the smaller one")

    def each(cost: str, calls: str) -> float:
        count = large[calls] - small[calls]
        return (large[cost] - small[cost]) / count if count else float("nan")
    return {"pairs": pairs, "pair": (large["Ir"] - small["Ir"]) / pairs,
            "malloc": each("malloc_Ir", "malloc_calls"), "free": each("free_Ir", "frees")}


def measure(args, contenders: dict, scratch: Path) -> dict:
    """(workload, contender) -> per_pair figures."""
    figures = {}
    for workload in args.workloads:
        n = SCALED[workload][1]
        for name, allocator in contenders.items():
            runs = [allocator_cost(workload_argv(workload, size), allocator,
                                   scratch / f"callgrind.{workload}.{name}.{size}") for size in (n, 2 * n)]
            figures[(workload, name)] = per_pair(*runs)
            common.progress(f"pairs {workload:12} {name:10} {figures[(workload, name)]['pair']:.1f} Ir per pair")
    return figures


def report(args, contenders: dict, figures: dict) -> list:
    rows, ratios = [], {name: [] for name in contenders}
    for workload in args.workloads:
        ref = figures[(workload, args.reference)]["pair"]
        for name in contenders:
            f = figures[(workload, name)]
            ratios[name].append(f["pair"] / ref)
            rows.append([workload, name, f"{f['pairs']:,}", f"{f['malloc']:.1f}", f"{f['free']:.1f}",
                         f"**{f['pair']:.1f}**", f"{f['pair'] / ref:.2f}"])
    rows += [["geomean", name, "", "", "", "", f"{common.geomean(v):.2f}"] for name, v in ratios.items()]
    return ["## Instructions per malloc/free pair (callgrind)", "",
            f"`{common.command_line()}` - {common.started()}. Calls from the program into the preloaded "
            "library, inclusive, differenced between n and 2n; per pair = that over the difference in "
            "allocation calls.", ""] + common.table(
        ["workload", "allocator", "pairs (2n - n)", "Ir / malloc", "Ir / free", "Ir / pair",
         f"/ {args.reference}"], rows) + [""]


def command(args) -> int:
    contenders = choose(args)
    if args.keep:
        scratch = Path(args.keep)
        scratch.mkdir(parents=True, exist_ok=True)
        figures = measure(args, contenders, scratch)
    else:
        with tempfile.TemporaryDirectory(prefix="strata-pairs.") as tmp:
            figures = measure(args, contenders, Path(tmp))
    common.emit(report(args, contenders, figures))
    return 0
