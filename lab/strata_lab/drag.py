"""Object drag (2002 reaps paper, §6.2 and §7; docs/drag.md): how long a
program keeps objects after their last access, measured by the strata-drag
Valgrind tool (src/drag).

measure() runs a program under the tool and writes, in its output folder:
drag.json (everything), curves.csv and curves.png (memory in use and the
ideal curve over allocation time: the paper's Figure 5), sites.csv and
sites.md (allocation sites ranked by drag)."""
import csv
import fnmatch
import functools
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Optional, Sequence

from . import paths, runner
from .errors import LabError, ProgramFailed

TOOL = "strata-drag"
PLATFORM = "amd64-linux"

# Patterns (globs) match a function's name or its whole frame "NAME
# (/full/path/FILE:LINE)": functions inlined elsewhere carry only their short
# name, so their file names them.
#
# Code whose accesses are bookkeeping, not the program's use of its objects:
# the naive region emulator walking its list (2002 paper §5.1: "the last access
# to any allocated object is by the client program and not by our region
# emulator"), strata's region layers walking their chunks, and the reap.
DEFAULT_IGNORE_FN = ("strata::workload::NaiveRegion::*", "*/workloads/common/naive_region.hpp:*",
                     "strata::layers::*", "*/include/strata/layers/*", "strata_reap_*", "*/src/reap/*")
# malloc blocks that are the measuring apparatus's own: the bookkeeping of a
# reap checked under Valgrind (src/reap/reap.cpp): whatever the reap library mallocs.
DEFAULT_IGNORE_ALLOC_FN = ("strata_reap_*", "*/src/reap/*")
# Leading frames of an allocation stack that are the allocator, not the site.
ALLOCATOR_FRAMES = ("malloc *", "calloc *", "realloc *", "memalign *", "posix_memalign *", "aligned_alloc *",
                    "valloc *", "operator new*", "strata_reap_*", "strata::reap::*", "strata::layers::*",
                    "* (in /*vgpreload_*", "* (/usr/include/c++/*", "*/workloads/common/naive_region.hpp:*",
                    "*/include/strata/*", "*/src/reap/*")
SITE_FRAMES = 4  # frames shown per site (and merged on)


def tool_dir(tool_name: str = TOOL) -> Path:
    """The Valgrind library folder holding the tool (src/drag/lib in the build;
    strata-pages lives there too)."""
    folder = paths.build_dir() / "src" / "drag" / "lib"
    tool = folder / f"{tool_name}-{PLATFORM}"
    if not tool.is_file():
        raise LabError(f"{tool} is missing: build {tool_name} first (`make build`; it needs Valgrind's "
                       "development files, Debian packages valgrind and pkg-config: tools/apt/drag.txt) "
                       "or point STRATA_LAB_BUILD_DIR at a build directory")
    return folder


def _valgrind() -> str:
    found = shutil.which("valgrind")
    if found is None:
        raise LabError("valgrind is not installed (Debian package valgrind: tools/apt/drag.txt)")
    return found


def _check_program(program: str) -> None:
    if os.sep in program:
        path = Path(program)
        if not path.exists():
            raise LabError(f"{program}: program not found")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise LabError(f"{program}: not an executable file")
    elif shutil.which(program) is None:
        raise LabError(f"{program}: program not found (not in PATH)")


def _check_writable(out_dir: Path) -> None:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out_dir, prefix=".strata-drag-check-"):
            pass
    except OSError as error:
        raise LabError(f"cannot write to the output folder {out_dir}: {error.strerror}") from None


@functools.lru_cache(maxsize=None)  # sites share their frames: each text is matched once
def _is_allocator_frame(frame: str) -> bool:
    return any(fnmatch.fnmatchcase(frame, pattern) for pattern in ALLOCATOR_FRAMES)


_LOCATION = re.compile(r" \((?:in )?(/[^():]*/)([^/():]+(?::\d+)?)\)$")


def short_name(name: str) -> str:
    """A demangled C++ name without its parameter list, return type and
    anonymous namespaces: "(anonymous namespace)::R (anonymous namespace)::f<int>(char*)" -> "f<int>"."""
    name = name.replace("(anonymous namespace)::", "")
    if name.endswith(")") and not name.endswith("operator()"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i] if i > 0 else name
                break
    depth = 0
    for i in range(len(name) - 1, -1, -1):  # a return type before the name
        depth += {">": 1, "<": -1, ")": 1, "(": -1}.get(name[i], 0)
        if depth == 0 and name[i] == " " and not name[:i].endswith("operator"):
            return name[i + 1:]
    return name


@functools.lru_cache(maxsize=None)
def short_frame(frame: str) -> str:
    """A frame as people read it: "ns::f(int) (/a/b/x.c:3)" -> "ns::f (x.c:3)"."""
    match = _LOCATION.search(frame)
    if match is None:
        return short_name(frame) if " (" not in frame else frame
    where = f"{'in ' if ' (in /' in frame else ''}{match.group(2)}"
    return f"{short_name(frame[:match.start()])} ({where})"


def site_frames(frames: Sequence[str]) -> list:
    """The frames that name a site: the allocator's own leading frames dropped."""
    frames = list(frames)
    i = 0
    while i < len(frames) - 1 and _is_allocator_frame(frames[i]):
        i += 1
    return frames[i:]


def summarize_sites(raw_sites: list) -> list:
    """Sites merged on their first SITE_FRAMES frames, ranked by drag area."""
    merged = {}
    for raw in raw_sites:
        frames = [short_frame(f) for f in site_frames(raw["frames"])[:SITE_FRAMES]]
        key = tuple(frames)
        site = merged.setdefault(key, {"site": " < ".join(frames) or "?", "frames": frames, "objects": 0,
                                       "bytes": 0, "live_at_exit": 0, "in_use_area": 0, "ideal_area": 0,
                                       "drag_time": 0})
        for field in ("objects", "bytes", "live_at_exit", "in_use_area", "ideal_area", "drag_time"):
            site[field] += raw[field]
    sites = list(merged.values())
    total_drag_area = sum(s["in_use_area"] - s["ideal_area"] for s in sites)
    for s in sites:
        s["drag_area"] = s["in_use_area"] - s["ideal_area"]
        s["drag_share"] = s["drag_area"] / total_drag_area if total_drag_area else 0.0
        s["average_drag_bytes"] = s["drag_time"] / s["objects"] if s["objects"] else 0.0
        s["total_drag"] = s["in_use_area"] / s["ideal_area"] if s["ideal_area"] else None
    sites.sort(key=lambda s: (-s["drag_area"], -s["in_use_area"], s["site"]))
    return sites


def with_frames(raw: dict) -> list:
    """The raw sites with their frames as text: the tool writes each site's frames as indices into one table
    (format version 2), since sites share most of their frames."""
    table = raw["frames"]
    return [{**site, "frames": [table[i] for i in site["frames"]]} for site in raw["sites"]]


def summarize(raw: dict) -> dict:
    """The figures of one run, from the tool's raw JSON."""
    in_use, ideal = raw["in_use_area"], raw["ideal_area"]
    return {
        "total_drag": in_use / ideal if ideal else None,
        "in_use_area": in_use, "ideal_area": ideal, "drag_area": in_use - ideal,
        "peak_in_use_bytes": raw["peak_in_use_bytes"], "peak_ideal_bytes": raw["peak_ideal_bytes"],
        "curve_resolution_bytes": raw["curve_resolution_bytes"],
        "objects": raw["objects"], "allocation_time_bytes": raw["allocation_time_bytes"],
        "objects_live_at_exit": raw["objects_live_at_exit"], "bytes_live_at_exit": raw["bytes_live_at_exit"],
        "ended": raw["ended"], "left_out": raw["left_out"], "main_seen": raw["main_seen"],
        "ignore_fn": raw["ignore_fn"], "ignore_alloc_fn": raw["ignore_alloc_fn"],
        "curves": [{"allocation_time_bytes": t, "in_use_bytes": m, "ideal_bytes": i} for t, m, i in raw["curves"]],
        "sites": summarize_sites(with_frames(raw)),
    }


def _status(result: runner.RunResult) -> dict:
    status = result.status_json()
    status["text"] = result.status()
    return status


def run_tool(tool_name: str, options, argv: Sequence[str], out, quiet: bool, timeout_s: Optional[float],
             preload: Sequence[str]) -> tuple:
    """Runs argv under one of strata's Valgrind tools (in tool_dir()), after
    checking the command and the output folder `out` (a Path or None);
    options(folder) gives the tool's options, its results in
    folder/raw.%p.json. Returns (RunResult, the raw JSON); a program killed
    too hard for the tool to write anything raises ProgramFailed. Children
    are traced: a program that execs is measured as its final image (same pid)."""
    if not argv:
        raise LabError("no command given (put it after --)")
    folder = tool_dir(tool_name)
    valgrind = _valgrind()
    _check_program(argv[0])
    if out is not None:
        _check_writable(out)
    with tempfile.TemporaryDirectory(prefix=f"{tool_name}-") as tmp:
        command = [valgrind, f"--tool={tool_name}", "-q", "--trace-children=yes", *options(tmp)]
        result = runner.run(command + ["--"] + list(argv), list(preload), {"VALGRIND_LIB": str(folder)},
                            quiet=quiet, capture=quiet, timeout_s=timeout_s)
        raw_path = Path(tmp) / f"raw.{result.pid}.json"
        if not raw_path.is_file():
            detail = f": {result.stderr_tail.strip()[-800:]}" if result.stderr_tail else ""
            raise ProgramFailed(f"the program {' '.join(argv)} {result.status()} under {tool_name}, "
                                f"which wrote no results{detail}")
        return result, json.loads(raw_path.read_text())


def measure(argv: Sequence[str], out_dir=None, quiet: bool = False,
            ignore_fn: Sequence[str] = DEFAULT_IGNORE_FN, ignore_alloc_fn: Sequence[str] = DEFAULT_IGNORE_ALLOC_FN,
            from_main: bool = True, timeout_s: Optional[float] = None, plot: bool = True,
            preload: Sequence[str] = ()) -> dict:
    """Runs argv under strata-drag; returns the figures (see docs/drag.md) and,
    with out_dir, writes them there. A program killed by a signal gives the
    results up to that moment, marked partial; one killed too hard for the
    tool to write anything raises ProgramFailed. preload: libraries put in
    LD_PRELOAD (e.g. another malloc: the tool still replaces malloc, so the
    figures do not depend on it)."""
    argv = list(argv)
    out = Path(out_dir) if out_dir is not None else None

    def options(tmp: str) -> list:  # full paths in frames: patterns can name folders (--fullpath-after=)
        return (["--read-inline-info=yes", "--fullpath-after=", f"--drag-out={tmp}/raw.%p.json",
                 f"--drag-from-main={'yes' if from_main else 'no'}"]
                + [f"--drag-ignore-fn={p}" for p in ignore_fn] + [f"--drag-ignore-alloc-fn={p}" for p in ignore_alloc_fn])
    result, raw = run_tool(TOOL, options, argv, out, quiet, timeout_s, preload)
    figures = summarize(raw)
    figures["command"] = argv
    figures["status"] = _status(result)
    figures["partial"] = result.returncode < 0 or result.timed_out
    figures["wall_seconds"] = result.wall_ns / 1e9
    if out is not None:
        write_outputs(figures, out, plot=plot)
        figures["out_dir"] = str(out)
    return figures


# ---- outputs ---------------------------------------------------------------

def write_outputs(figures: dict, out: Path, plot: bool = True) -> None:
    (out / "drag.json").write_text(json.dumps(figures, indent=1) + "\n")
    with open(out / "curves.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["allocation_time_bytes", "in_use_bytes", "ideal_bytes"])
        for point in figures["curves"]:
            writer.writerow([point["allocation_time_bytes"], point["in_use_bytes"], point["ideal_bytes"]])
    with open(out / "sites.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["rank", "drag_share", "drag_area", "objects", "bytes", "average_drag_bytes",
                         "site_total_drag", "live_at_exit", "site"])
        for rank, s in enumerate(figures["sites"], 1):
            writer.writerow([rank, f"{s['drag_share']:.6f}", s["drag_area"], s["objects"], s["bytes"],
                             f"{s['average_drag_bytes']:.1f}",
                             "" if s["total_drag"] is None else f"{s['total_drag']:.4f}", s["live_at_exit"],
                             s["site"]])
    (out / "sites.md").write_text(sites_markdown(figures["sites"]))
    if plot:
        try:
            plot_curves(figures, out / "curves.png")
        except ImportError:  # the lab's .venv has it; a bare python3 may not
            print(f"strata-lab drag: {out / 'curves.png'} not drawn: matplotlib is not installed "
                  "(use the lab's .venv)", file=sys.stderr)


def sites_markdown(sites: list, limit: int = 20) -> str:
    lines = ["| # | drag share | objects | bytes | average drag (bytes of allocation time) | site drag | site |",
             "|---:|---:|---:|---:|---:|---:|---|"]
    for rank, s in enumerate(sites[:limit], 1):
        site_drag = "-" if s["total_drag"] is None else f"{s['total_drag']:.2f}"
        frames = " ← ".join(f.replace("|", "\\|") for f in s["frames"])
        lines.append(f"| {rank} | {s['drag_share'] * 100:.1f}% | {s['objects']:,} | {s['bytes']:,} | "
                     f"{s['average_drag_bytes']:,.0f} | {site_drag} | {frames} |")
    return "\n".join(lines) + "\n"


def plot_curves(figures: dict, path: Path) -> None:
    # imported here: only the plot needs it. A Figure of its own, not pyplot's global state: the evaluation
    # draws these from steps that run side by side in threads.
    from matplotlib.figure import Figure
    t = [p["allocation_time_bytes"] / 2**20 for p in figures["curves"]]
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    ax.plot(t, [p["in_use_bytes"] / 1024 for p in figures["curves"]], label="in use", drawstyle="steps-post")
    ax.plot(t, [p["ideal_bytes"] / 1024 for p in figures["curves"]], label="freed right after last access",
            drawstyle="steps-post")
    ax.set_xlabel("allocation time (MiB allocated)")
    ax.set_ylabel("memory required (KiB)")
    drag = figures["total_drag"]
    title = " ".join(Path(figures["command"][0]).name.split() + figures["command"][1:])[:70]
    ax.set_title(f"{title}\ntotal drag {drag:.2f}" if drag else title, fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# ---- the evaluation's Drag section -------------------------------------------

# ---- the command -------------------------------------------------------------

def _kib(n: int) -> str:
    return f"{n / 1024:,.1f} KiB"


def describe(figures: dict, top: int = 5) -> str:
    drag = figures["total_drag"]
    lines = [f"total drag {drag:.3f}" if drag is not None else "total drag: not defined (no object was measured)"]
    lines.append(f"peak in use {_kib(figures['peak_in_use_bytes'])}, peak if freed right after last access "
                 f"{_kib(figures['peak_ideal_bytes'])}; {figures['objects']:,} objects, allocation time "
                 f"{figures['allocation_time_bytes'] / 2**20:,.2f} MiB")
    if not figures["main_seen"] and figures["left_out"]["before_main"]:
        lines.append(f"note: main was never reached, so all {figures['left_out']['before_main']:,} objects were "
                     "left out as allocated before it; --all-objects counts them")
    shown = [s for s in figures["sites"] if s["drag_area"] > 0][:top]
    if shown:
        lines.append("sites with the most drag (bytes × allocation time):")
        for s in shown:
            lines.append(f"  {s['drag_share'] * 100:5.1f}%  {s['objects']:,} objects, average drag "
                         f"{s['average_drag_bytes']:,.0f} B  {s['site']}")
    return "\n".join(lines)


def command(args) -> int:
    figures = measure(args.command, out_dir=args.output, quiet=False,
                      ignore_fn=list(DEFAULT_IGNORE_FN) + list(args.ignore_fn or []),
                      ignore_alloc_fn=list(DEFAULT_IGNORE_ALLOC_FN) + list(args.ignore_alloc_fn or []),
                      from_main=not args.all_objects, timeout_s=args.timeout, preload=args.allocator.preload())
    print(f"strata-lab drag: {args.output}/drag.json")
    print(describe(figures))
    return exit_status(figures, "strata-lab drag", "; what was live then counts as reclaimed there")


def exit_status(figures: dict, who: str, partial_note: str = "") -> int:
    """The command's status (0 or 1) after a measurement, saying why when the program failed."""
    if figures["partial"]:
        print(f"{who}: the program {figures['status']['text']}: these results are PARTIAL "
              f"(up to that moment{partial_note})")
        return 1
    if figures["status"].get("exit_code", 0) != 0:  # complete results, but the run failed
        print(f"{who}: the program {figures['status']['text']}")
        return 1
    return 0

