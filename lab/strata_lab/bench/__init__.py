"""strata-lab bench: the benchmarks, one module each, on the lab's runner,
allocator registry, statistics and Valgrind parsing (docs/lab.md, "Benchmarks")."""
from . import layers, malloc, pairs, reap, shims

BENCHMARKS = {"layers": layers, "reap": reap, "malloc": malloc, "pairs": pairs, "shims": shims}


def add_parsers(parser) -> None:
    sub = parser.add_subparsers(dest="benchmark", required=True, metavar="|".join(BENCHMARKS))
    for module in BENCHMARKS.values():
        module.add_parser(sub)


def command(args) -> int:
    return args.bench(args)
