"""strata-lab: the command line (docs/lab.md)."""
import argparse
import sys

from . import allocators, bench, drag, frag, pages, paths, precondition, profiling, tracing, workload_catalogue, workloads
from .errors import LabError, ProgramFailed


def _allocator(name: str):
    return allocators.resolve(name)


def _add_command(parser) -> None:
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS...")


def _add_alloc(parser, required: bool = False) -> None:
    parser.add_argument("--alloc", dest="alloc", default=None if required else "glibc", required=required,
                        metavar="NAME", help=f"{', '.join(allocators.KNOWN)}, or a path to a malloc library")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="strata-lab", description="strata's allocation laboratory")
    sub = parser.add_subparsers(dest="subcommand", required=True)
    for add in (_instruments, _trace, _workloads, _evaluation):
        add(sub)
    return parser


def _instruments(sub) -> None:
    """profile, run, frag, drag, pages: one program under one instrument."""
    p = sub.add_parser("profile", help="profile a program's allocations (JSON)")
    p.add_argument("-o", "--output", default="profile.json")
    p.add_argument("--cutoff", type=int, default=None, help="exact-size histogram below this size (default 4096)")
    _add_alloc(p)
    _add_command(p)
    p.set_defaults(run=profiling.command)

    p = sub.add_parser("run", help="run a program after adversarial preconditioning, timed")
    _add_alloc(p, required=True)
    p.add_argument("--preset", help=", ".join(precondition.PRESETS))
    p.add_argument("--multiplier", type=float)
    p.add_argument("--occupancy", type=float)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--profile", help="profile JSON from `strata-lab profile`")
    p.add_argument("--json", help="also write the result as JSON here")
    _add_command(p)
    p.set_defaults(run=precondition.command)

    p = sub.add_parser("frag", help="fragmentation: peak memory in use / peak live data")
    _add_alloc(p)
    p.add_argument("--csv", help="time series of memory in use and live data")
    p.add_argument("--json", help="also write the result as JSON here")
    p.add_argument("--interval", type=float, default=10, help="sampling interval in ms (default 10)")
    _add_command(p)
    p.set_defaults(run=frag.command)

    p = sub.add_parser("drag", help="object drag under Valgrind: total drag, curves, sites (docs/drag.md)")
    p.add_argument("-o", "--output", default="drag", help="output folder (default ./drag)")
    p.add_argument("--ignore-fn", action="append", metavar="PATTERN",
                   help="accesses made inside matching functions do not count (repeatable; glob, e.g. 'ns::Pool::*')")
    p.add_argument("--ignore-alloc-fn", action="append", metavar="PATTERN",
                   help="leave out malloc blocks allocated under a matching function (repeatable)")
    p.add_argument("--all-objects", action="store_true", help="also count objects allocated before main")
    p.add_argument("--timeout", type=float, default=None, help="seconds; the program is killed after that")
    _add_alloc(p)
    _add_command(p)
    p.set_defaults(run=drag.command)

    p = sub.add_parser("pages", help="page-level locality under Valgrind: LRU fault curve, working set (docs/pages.md)")
    p.add_argument("-o", "--output", default="pages", help="output folder (default ./pages)")
    p.add_argument("--window", type=int, default=pages.DEFAULT_WINDOW,
                   help=f"references per working-set window (default {pages.DEFAULT_WINDOW:,})")
    p.add_argument("--prefetch-memory", type=int, action="append", metavar="PAGES",
                   help="simulate swap prefetching (Vam Fig. 9) in a memory of PAGES pages (repeatable, up to 4)")
    p.add_argument("--timeout", type=float, default=None, help="seconds; the program is killed after that")
    _add_alloc(p)
    _add_command(p)
    p.set_defaults(run=pages.command)


def _trace(sub) -> None:
    p = sub.add_parser("trace", help="record or replay an allocation trace")
    tsub = p.add_subparsers(dest="trace_command", required=True)
    r = tsub.add_parser("record", help="record a program's allocation trace")
    r.add_argument("-o", "--output", required=True)
    _add_alloc(r)
    _add_command(r)
    r.set_defaults(run=tracing.record)
    r = tsub.add_parser("replay", help="replay a trace on an allocator")
    r.add_argument("trace")
    _add_alloc(r)
    r.add_argument("--csv", help="time series of memory in use and live data")
    r.add_argument("--json", help="also write the result as JSON here")
    r.add_argument("--interval", type=float, default=10, help="sampling interval in ms (default 10)")
    r.add_argument("--threads", action="store_true",
                   help="replay each recorded thread on a thread of its own (still in the recorded order)")
    r.set_defaults(run=tracing.replay, command=None)


def _workloads(sub) -> None:
    p = sub.add_parser("workloads", help="list the workloads (docs/workloads.md), or their Table 3 statistics")
    p.add_argument("--format", choices=["text", "markdown"], default="text",
                   help="the list as text (default) or as a Markdown table")
    p.add_argument("--stats", action="store_true",
                   help="profile each in naive mode at its default scale: the 2002 paper's Table 3, in Markdown")
    p.add_argument("--only", metavar="NAME,...", help="with --stats: just these workloads")
    p.add_argument("--markdown", metavar="FILE", help="with --stats: also write the table here")
    p.add_argument("--profiles-dir", metavar="DIR", help="with --stats: keep the profiles here")
    p.add_argument("--workloads-dir", default=None, help=argparse.SUPPRESS)  # tests: another registry
    p.set_defaults(run=workload_catalogue.list_command, command=None, alloc="glibc")

    p = sub.add_parser("calibrate", help="the stand-ins' statistics at the evaluation's scale against the papers' "
                                         "(Markdown; exit 1 if one is outside 2x without a reason)")
    p.add_argument("--config", default=str(paths.REPO_ROOT / "lab" / "configs" / "default.toml"),
                   help="the evaluation whose statistics scale to use (default lab/configs/default.toml)")
    p.add_argument("--only", metavar="NAME,...", help="just these stand-ins")
    p.add_argument("--timeout", type=float, default=None, help="seconds per program run")
    p.add_argument("--workloads-dir", default=None, help=argparse.SUPPRESS)  # tests: another registry
    p.set_defaults(run=_calibrate, command=None, alloc="glibc")

    p = sub.add_parser("workload", help="run one workload, timed (as `run` does), and print its checksum")
    p.add_argument("name", help="a workload (`strata-lab workloads` lists them)")
    p.add_argument("--mode", required=True, help=", ".join(workloads.MODES))
    p.add_argument("--scale", default=None, help="a positive integer (default: the workload's default scale)")
    p.add_argument("--seed", type=int, default=1)
    _add_alloc(p)
    p.add_argument("--preset", default="Adv0", help=", ".join(precondition.PRESETS))
    p.add_argument("--profile", help="profile for Adv1 and up (default: made first, with glibc)")
    p.add_argument("--timeout", type=float, default=None, help="seconds; the program is killed after that")
    p.add_argument("--json", help="also write the result as JSON here")
    p.add_argument("--workloads-dir", default=None, help=argparse.SUPPRESS)  # tests: another registry
    p.set_defaults(run=workload_catalogue.run_command, command=None)


def _evaluation(sub) -> None:
    """evaluate, bench and report."""
    # The evaluation (docs/lab.md, "Evaluation"): imported when used (it needs matplotlib).
    p = sub.add_parser("evaluate", help="run an evaluation matrix (lab/configs/*.toml) and write its report")
    p.add_argument("--config", help="TOML config (default lab/configs/default.toml)")
    p.add_argument("-o", "--output", help="results folder (default results/<YYYYmmdd-HHMMSS>, linked as results/latest)")
    p.add_argument("--cachegrind", action="store_true",
                   help="a cachegrind run (D1, LL misses, instructions) for every cell, not only those of the "
                        "config's cachegrind_sections (slow)")
    p.add_argument("--name", help="with -- CMD: the program's name in the report (default: the command's)")
    p.add_argument("--drag", action="store_true",
                   help="also run each [[program]] (or CMD) once under strata-drag: the first screen's region and "
                        "reap advice then weighs its object drag (slow: Valgrind)")
    p.add_argument("program", nargs=argparse.REMAINDER,
                   help="-- CMD ARGS...: evaluate your own program (docs/lab.md, \"Evaluate your own program\")")
    p.set_defaults(run=_evaluate, command=None, alloc="glibc")

    p = sub.add_parser("bench", help="a benchmark: layers, reap, malloc or shims (Markdown tables on stdout)")
    bench.add_parsers(p)
    p.set_defaults(run=bench.command, command=None, alloc="glibc")

    p = sub.add_parser("misuse", help="the misuse suite on each allocator: the detection table (docs/lab.md, "
                                      "\"Hardening\")")
    p.add_argument("--alloc", dest="allocs", action="append", metavar="NAME",
                   help="an allocator (repeatable; default: glibc, scudo, mimalloc-secure, snmalloc-checks, strata, "
                        "strata-hardened; a missing one is skipped with how to get it)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per program run (default 30)")
    p.set_defaults(run=_misuse, command=None, alloc="glibc")

    p = sub.add_parser("report", help="re-render an evaluation's report from its raw results")
    p.add_argument("results_dir")
    p.set_defaults(run=_report, command=None, alloc="glibc")


def _evaluate(args) -> int:
    from . import evaluation
    return evaluation.command(args)


def _calibrate(args) -> int:
    from . import calibration
    return calibration.command(args)


def _misuse(args) -> int:
    from . import misuse_suite
    return misuse_suite.command(args)


def _report(args) -> int:
    from . import evaluation
    return evaluation.report_command(args)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command is not None:
            args.command = args.command[1:] if args.command[:1] == ["--"] else args.command
            if not args.command:
                raise LabError("no command given: put the program after --")
        args.allocator = _allocator(args.alloc)
        return args.run(args)
    except LabError as error:
        print(f"strata-lab: error: {error}", file=sys.stderr)
        return 2
    except ProgramFailed as error:
        print(f"strata-lab: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
