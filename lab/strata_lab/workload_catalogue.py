"""The workloads' catalogue: `strata-lab workload list` (with the 2002
paper's Table 3 beside ours, docs/workloads.md) and `strata-lab workload run`."""
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Optional

from . import precondition
from .errors import LabError
from .workloads import Workload, lookup, profile, registry, run

# ---------------------------------------------------------------------------
# The 2002 paper's Table 3 beside ours (docs/workloads.md).

# Table 3 of "Reconsidering Custom Memory Allocation" (2002): total objects,
# max objects in use, average size, total bytes, max bytes in use.
PAPER_TABLE3 = {
    "175.vpr": (3_897, 3_813, 44, 172_967, 124_636),
    "boxed-sim": (52_203, 4_865, 15, 777_913, 301_987),
    "197.parser": (9_334_022, 230_919, 38, 351_772_626, 3_207_529),
    "lcc": (1_465_416, 92_696, 57, 83_217_416, 3_875_780),
    "176.gcc": (9_065_285, 2_538_005, 54, 487_711_209, 112_753_774),
    "apache": (149_275, 3_749, 208, 30_999_123, 754_492),
    "mudlle": (1_687_079, 38_645, 29, 48_699_895, 662_964),
    "253.perlbmk": (8_888_870, 5_813, 16, 144_514_214, 284_029),
    "164.gzip": (1_307, 72, 6_108, 7_983_304, 6_615_288),
}
# Which paper program each of our workloads stands in for (issue 8).
PAPER_PROGRAM = {"router": "175.vpr", "boxed-sim": "boxed-sim", "parser": "197.parser", "compiler": "lcc",
                 "scopes": "176.gcc", "server": "apache", "interp": "mudlle", "text": "253.perlbmk",
                 "bigbuf": "164.gzip"}


def catalogue(workloads) -> str:
    """Markdown: every workload with its kind, modes, default scale, what it imitates and where the paper has it."""
    lines = ["| workload | kind | modes | default scale | imitates | in the papers |", "|---|---|---|---:|---|---|"]
    for w in workloads:
        lines.append(f"| `{w.name}` | {w.kind} | {', '.join(w.modes)} | {w.default_scale} | {w.imitates} | {w.paper} |")
    return "\n".join(lines) + "\n"


def stats_mode(workload: Workload) -> str:
    return "naive" if "naive" in workload.modes else workload.modes[0]


def stats_table(workloads: list, directory: Path, scale_of=None, progress=None) -> str:
    """Markdown: Table 3's columns for each workload in naive mode at its
    default scale (or scale_of(workload)), the paper's row beneath where it has one."""
    lines = ["| workload | mode, scale | total objects | max objects in use | average size (B) | "
             "total memory (B) | max in use (B) | total/max |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for workload in workloads:
        mode = stats_mode(workload)
        scale = scale_of(workload) if scale_of else workload.default_scale
        if progress:
            progress(workload, mode, scale)
        s = profile(workload, mode, scale, 1, Path(directory) / f"{workload.name}.{mode}.json")
        ratio = f"{s['total_to_peak_bytes']:.1f}" if s["total_to_peak_bytes"] else "-"
        lines.append(f"| {workload.name} | {mode}, {scale} | {s['total_objects']:,} | {s['peak_live_objects']:,} | "
                     f"{s['average_size']:,.0f} | {s['total_bytes']:,} | {s['peak_live_bytes']:,} | {ratio} |")
        paper = PAPER_PROGRAM.get(workload.name)
        if paper:
            objects, peak_objects, size, total, peak = PAPER_TABLE3[paper]
            lines.append(f"| ↳ *paper: {paper}* | | *{objects:,}* | *{peak_objects:,}* | *{size:,}* | *{total:,}* | "
                         f"*{peak:,}* | *{total / peak:.1f}* |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# The command line: `strata-lab workloads` and `strata-lab workload NAME`.

def _scale_arg(text: Optional[str], workload: Workload) -> int:
    if text is None:
        return workload.default_scale
    if not re.fullmatch(r"[0-9]+", text.strip()) or int(text) <= 0:
        raise LabError(f"--scale '{text}': must be a positive integer")
    return int(text)


def list_command(args) -> int:
    known = registry(args.workloads_dir)
    if not args.stats:
        for flag, value in (("--only", args.only), ("--markdown", args.markdown), ("--profiles-dir", args.profiles_dir)):
            if value is not None:
                raise LabError(f"{flag} goes with --stats")
    if args.profiles_dir:
        Path(args.profiles_dir).mkdir(parents=True, exist_ok=True)
    if args.stats:
        chosen = list(known.values())
        if args.only:
            names = [n.strip() for n in args.only.split(",") if n.strip()]
            for name in names:
                if name not in known:
                    raise LabError(f"--only: unknown workload '{name}'; known: {', '.join(known)}")
            chosen = [known[n] for n in names]
        with tempfile.TemporaryDirectory(prefix="strata-wl-stats-") as tmp:
            table = stats_table(chosen, Path(args.profiles_dir or tmp),
                                progress=lambda w, m, s: print(f"strata-lab workloads: profiling {w.name} "
                                                               f"--mode {m} --scale {s}", file=sys.stderr))
        if args.markdown:
            Path(args.markdown).write_text(table)
        print(table, end="")
        return 0
    if args.format == "markdown":
        print(catalogue(known.values()), end="")
        return 0
    width = max((len(n) for n in known), default=8)
    for workload in known.values():
        print(f"{workload.name:<{width}}  {workload.kind:<7}  {','.join(workload.modes):<17}  "
              f"scale {workload.default_scale:<4}  {workload.imitates}")
    return 0


def run_command(args) -> int:
    workload = lookup(args.name, args.workloads_dir)
    scale = _scale_arg(args.scale, workload)
    if args.seed < 0:
        raise LabError(f"--seed {args.seed}: must be a non-negative integer")
    if args.timeout is not None and args.timeout <= 0:
        raise LabError(f"--timeout {args.timeout}: must be > 0 seconds")
    workload.invocation(args.mode, scale, args.seed)  # bad mode/scale/missing binary: before anything runs
    chosen = precondition.choose(args.preset, None, None)
    profile_path = args.profile
    with tempfile.TemporaryDirectory(prefix="strata-wl-") as tmp:
        if chosen.multiplier > 0 and profile_path is None:
            profile_path = Path(tmp) / "profile.json"
            print(f"strata-lab workload: profiling {workload.name} --mode {args.mode} --scale {scale} first "
                  f"(preset {chosen.name} preconditions from a profile)", file=sys.stderr)
            profile(workload, args.mode, scale, args.seed, profile_path, timeout_s=args.timeout)
        result = run(workload, args.mode, scale, args.seed, args.allocator, chosen.name, profile_path,
                     args.timeout)
    result["versions"] = workload.versions()
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    where = (f"strata-lab workload: {workload.name} --mode {args.mode} --scale {scale} --seed {args.seed} "
             f"on {result['allocator']} {result['preset']}")
    if result["status"] != "ok":
        print(f"{where}: {result['status']} ({result['exit_status']})", file=sys.stderr)
        if result["stderr_tail"].strip():
            print(result["stderr_tail"].rstrip()[-2000:], file=sys.stderr)
        return 1
    heap = result["peak_heap_resident_bytes"]
    print(f"{where}: program {result['program_seconds']:.3f} s, peak RSS {result['peak_rss_bytes'] / 2**20:.1f} MiB, "
          f"peak heap in use {'no sample' if heap is None else f'{heap / 2**20:.1f} MiB'}")
    print(f"checksum {result['checksum']}")
    return 0
