"""The real-program suite of `strata-lab bench malloc --programs` (issue 34):
real programs run under each contender for time and footprint, each giving
the same output under every allocator. Peak RSS is the whole process tree's
(its largest process), measured by the peak_rss helper."""
import hashlib
import os
import random
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import workloads
from ..errors import LabError, ProgramFailed
from ..paths import REPO_ROOT
from . import common

# Real programs, for time and footprint: peak RSS of the whole process tree
# (its largest process), measured by the peak_rss helper. name -> Program:
# an argv ({programs} is tests/programs, {out} a scratch directory, {source}
# a bare clone of this repository made once per run of the driver), or a
# workload of the registry (workloads/<name>, docs/workloads.md) in a mode.
TESTS_PROGRAMS = REPO_ROOT / "tests" / "programs"


@dataclass(frozen=True)
class Program:
    description: str
    argv: tuple = ()
    quick_argv: tuple = ()      # under --quick (default: argv)
    workload: str = ""          # else: this workload of the registry, in `mode`
    mode: str = "naive"
    scale: int = 0              # the workload's scale (default: its default scale / WORKLOAD_SCALE_DIVISOR)


SQLITE = "sed 's/{{{{rows}}}}/{rows}/g' {{programs}}/sqlite_rows.sql | /usr/bin/sqlite3 :memory:"
PROGRAMS = {
    "python3-startup": Program("python3 -c pass: interpreter start-up and exit", ("/usr/bin/python3", "-c", "pass")),
    "python3": Program("python3 churn_dicts.py: builds, thins and drops dicts, lists and sets of small objects",
                       ("/usr/bin/python3", "{programs}/churn_dicts.py")),
    "gcc": Program("gcc -O2 -g -c sample.c (gcc, cc1 and as; the largest process counts)",
                   ("/usr/bin/gcc", "-O2", "-g", "-c", "{programs}/sample.c", "-o", "{out}/sample.o")),
    "sqlite3": Program("sqlite3 sqlite_rows.sql, 200 000 rows in memory: 3 indexes, an aggregate, a join, a sort, "
                       "VACUUM", ("/bin/sh", "-c", SQLITE.format(rows=200000)),
                       ("/bin/sh", "-c", SQLITE.format(rows=20000))),
    "lua": Program("lua5.4 on workloads/lua's job (binary trees, string building, gsub, sorted records)",
                   workload="lua"),
    "perl": Program("perl on workloads/perl's job (words counted in hashes, joined, split, substituted, sorted)",
                    workload="perl"),
    "python3-raytrace": Program("pyperformance's raytrace on Debian's python3, PYTHONMALLOC=malloc",
                                workload="py-raytrace"),
    "python3-json": Program("pyperformance's json_loads on Debian's python3, PYTHONMALLOC=malloc",
                            workload="py-json-loads"),
    "cc1": Program("gcc's cc1 -O2 on workloads/gcc's generated C file (obstacks and GC pages)",
                   workload="gcc", mode="custom"),
    "clang": Program("clang-14 -O1 on workloads/clang's generated C++ file (BumpPtrAllocator for the AST, malloc "
                     "for the rest)", workload="clang", mode="custom", scale=10),
    "redis": Program("redis-server (Debian's) driven by redis-benchmark over a Unix socket: 13 of its tests, "
                     "40 000 requests each, 256-byte values (redis_job.sh)",
                     ("/bin/sh", "{programs}/redis_job.sh", "40000"), ("/bin/sh", "{programs}/redis_job.sh", "2000")),
    "git": Program("git: clone this repository (bare), repack it from scratch on 2 threads, fsck (git_gc.sh)",
                   ("/bin/sh", "{programs}/git_gc.sh", "{source}")),
}
# The default set: the real-program suite (issue 34), jobs of other authors where there are some.
DEFAULT_PROGRAMS = ["sqlite3", "lua", "perl", "python3-raytrace", "python3-json", "cc1", "clang", "redis", "git"]
# Workloads of the registry run at a tenth of their default scale (about 1 s
# with glibc), their test scale under --quick.
WORKLOAD_SCALE_DIVISOR = 10


def program_command(name: str, scratch: str, source: str, quick: bool) -> tuple:
    """(argv, environment) of one run of a real program."""
    spec = PROGRAMS[name]
    if spec.workload:
        workload = workloads.lookup(spec.workload)
        full_scale = spec.scale or max(1, workload.default_scale // WORKLOAD_SCALE_DIVISOR)
        scale = workload.test["scale"] if quick else full_scale
        invocation = workload.invocation(spec.mode, scale, workload.test["seed"])
        return list(invocation.argv), dict(invocation.env)
    argv = spec.quick_argv if quick and spec.quick_argv else spec.argv
    return [a.format(programs=TESTS_PROGRAMS, out=scratch, source=source) for a in argv], {}


def run_program_once(name: str, allocator, scratch: str, source: str, quick: bool = False) -> dict:
    """One real program under one contender: its peak RSS, time and a digest
    of its output (which must not depend on the allocator)."""
    argv, env = program_command(name, scratch, source, quick)
    preload = ["--preload", str(allocator.library)] if allocator.library else []
    # The helper gives the preload to the program only.
    result = common.run([common.program("bench/malloc/peak_rss"), *preload, *argv], cwd=scratch,
                        variables={"PYTHONHASHSEED": "0", "LC_ALL": "C", "TZ": "UTC", "PATH": "/usr/bin:/bin", **env})
    # A preload ld.so cannot load is only a warning from it: here an error.
    if "cannot be preloaded" in (result.stderr_tail or ""):
        raise ProgramFailed(f"{name}: {allocator.library} cannot be preloaded:\n{result.stderr_tail.strip()}")
    lines = result.stdout.splitlines()
    report = common.fields(lines[-1])
    produced = b"".join((Path(scratch) / f).read_bytes() for f in sorted(os.listdir(scratch))
                        if (Path(scratch) / f).is_file())
    return {"rss_peak_bytes": int(report["peak_rss_bytes"]), "elapsed_s": float(report["elapsed_s"]),
            "output": hashlib.sha256("\n".join(lines[:-1]).encode() + produced).hexdigest()[:16]}


def clone_source(tmp: str) -> str:
    """A bare clone of this repository, the git job's input: fixed for the
    whole run, whatever is committed meanwhile."""
    source = os.path.join(tmp, "source.git")
    try:
        subprocess.run(["git", "clone", "-q", "--bare", "--no-local", str(REPO_ROOT), source], check=True,
                       capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as error:
        raise LabError(f"git job: cannot clone {REPO_ROOT}: {getattr(error, 'stderr', '') or error}") from None
    return source


def measure_programs(args, contenders: dict) -> common.Measurements:
    runs = common.Measurements()
    shuffle = random.Random(args.seed)
    # One scratch path for every run: gcc records its working directory in
    # the object file, which must not differ between allocators.
    with tempfile.TemporaryDirectory(prefix="strata-bench-programs.") as tmp:
        scratch = os.path.join(tmp, "work")
        source = clone_source(tmp) if "git" in args.programs else ""
        for rnd in range(args.rounds if args.programs else 0):
            for name in args.programs:
                order = list(contenders)
                shuffle.shuffle(order)
                for contender in order:
                    os.mkdir(scratch)
                    try:
                        run = run_program_once(name, contenders[contender], scratch, source, args.quick)
                    finally:
                        shutil.rmtree(scratch)
                    runs.add(rnd, name, contender, run)
                    common.progress(f"round {rnd + 1}/{args.rounds} {name:6} {contender:9} {run['elapsed_s']:8.3f} s"
                                    f"  {run['rss_peak_bytes'] / 2**20:7.1f} MiB")
    common.check_same(runs, "output", "output differs between allocators")
    return runs
