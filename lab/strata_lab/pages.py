"""Page-level locality (Vam 2005, §4.5-4.6; docs/pages.md), measured by the
strata-pages Valgrind tool (src/drag/pages_main.c): the LRU stack distance of
every page reference, so the fault curve (faults under LRU as a function of
resident memory, every size at once: Mattson et al., 1970) and the working
set over time.

measure() runs a program under the tool (with its own allocator: the tool
replaces no malloc; `preload` picks another) and writes, in its output
folder: pages.json (everything), curve.csv and curve.png (the fault curve),
working_set.csv."""
import csv
import json
import sys
from pathlib import Path
from typing import Optional, Sequence

from .drag import _status, exit_status, run_tool
from .errors import LabError

TOOL = "strata-pages"
PAGE_KIB = 4
DEFAULT_WINDOW = 1_000_000   # references per working-set window
KNEE_TOLERANCE = 0.10        # "within 10% of compulsory"


# ---- the fault curve -----------------------------------------------------------

def fault_curve(distances: Sequence, references: int) -> list:
    """faults[m] for a memory of m pages, m = 0 .. the largest finite distance
    (beyond it: the compulsory faults, faults[-1]). A reference at stack
    distance d faults when m < d; a page's first reference faults always."""
    largest = max((d for d, _ in distances), default=0)
    at = [0] * (largest + 2)
    for d, count in distances:
        at[d] += count
    faults = [0] * (largest + 1)
    remaining = references  # faults at m: references at distance > m, plus the first references
    for m in range(largest + 1):
        remaining -= at[m]
        faults[m] = remaining
    return faults


def faults_at(curve: list, pages: int) -> int:
    """Faults in a memory of `pages` pages (0: every reference faults)."""
    return curve[min(max(pages, 0), len(curve) - 1)]


def knee(curve: list, compulsory: int, tolerance: float = KNEE_TOLERANCE) -> int:
    """The smallest memory (pages) at which faults are within tolerance of the compulsory ones."""
    limit = compulsory * (1 + tolerance)
    return next(m for m, faults in enumerate(curve) if faults <= limit)


def summarize(raw: dict) -> dict:
    """The figures of one run, from the tool's raw JSON."""
    curve = fault_curve(raw["distances"], raw["references"])
    # Faults at every memory size: first touches, and touches of pages given back to the kernel.
    compulsory = raw["distinct_pages"] + raw["refilled_pages"]
    assert curve[-1] == compulsory, "the tool's distances do not add up to its references"
    return {
        "page_size": raw["page_size"], "references": raw["references"],
        "references_to_another_page": raw["references_to_another_page"],
        "distinct_pages": raw["distinct_pages"], "discarded_pages": raw["discarded_pages"],
        "refilled_pages": raw["refilled_pages"], "compulsory_faults": compulsory,
        "knee_pages": knee(curve, compulsory), "distances": raw["distances"], "curve": curve,
        "window_references": raw["window_references"], "working_set": raw["working_set"],
        "peak_working_set": max(raw["working_set"], default=0),
        "prefetch": raw["prefetch"],  # [{memory_pages, misses, prefetchable}]: swap prefetching (Vam Fig. 9)
    }


# ---- running the tool ------------------------------------------------------------

def measure(argv: Sequence[str], out_dir=None, quiet: bool = False, window: int = DEFAULT_WINDOW,
            timeout_s: Optional[float] = None, plot: bool = True, preload: Sequence[str] = (),
            prefetch_memory: Sequence[int] = ()) -> dict:
    """Runs argv under strata-pages; returns the figures (docs/pages.md) and,
    with out_dir, writes them there. preload: libraries put in LD_PRELOAD
    (another malloc: the program runs with it, and its accesses count).
    prefetch_memory: memory sizes (pages, at most 4) at which to simulate swap prefetching."""
    argv = list(argv)
    if window < 1:
        raise LabError(f"--window {window}: must be >= 1")
    if len(prefetch_memory) > 4 or any(m < 1 for m in prefetch_memory):
        raise LabError(f"--prefetch-memory {list(prefetch_memory)}: at most 4 sizes, each >= 1 page")
    out = Path(out_dir) if out_dir is not None else None

    def options(tmp: str) -> list:
        return ([f"--pages-out={tmp}/raw.%p.json", f"--pages-window={window}"]
                + [f"--pages-prefetch-memory={m}" for m in prefetch_memory])
    result, raw = run_tool(TOOL, options, argv, out, quiet, timeout_s, preload)
    figures = summarize(raw)
    figures.update(command=argv, preload=list(preload), status=_status(result),
                   partial=result.returncode < 0 or result.timed_out, wall_seconds=result.wall_ns / 1e9)
    if out is not None:
        write_outputs(figures, out, plot=plot)
        figures["out_dir"] = str(out)
    return figures


# ---- outputs ----------------------------------------------------------------------

def write_outputs(figures: dict, out: Path, plot: bool = True) -> None:
    # Whole or absent, never half-written: the evaluation reads glibc's while other runs go on (bench_steps).
    partial = out / "pages.json.part"
    partial.write_text(json.dumps({k: v for k, v in figures.items() if k != "curve"}, indent=1) + "\n")
    partial.replace(out / "pages.json")
    write_curve_csv(figures["curve"], out / "curve.csv")
    with open(out / "working_set.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["window", "first_reference", "distinct_pages"])
        for w, pages in enumerate(figures["working_set"]):
            writer.writerow([w, w * figures["window_references"], pages])
    if plot:
        try:
            plot_curves({"": figures["curve"]}, out / "curve.png", _title(figures["command"]))
        except ImportError:  # the lab's .venv has it; a bare python3 may not
            print(f"strata-lab pages: {out / 'curve.png'} not drawn: matplotlib is not installed "
                  "(use the lab's .venv)", file=sys.stderr)


def write_curve_csv(curve: list, path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["memory_pages", "memory_kib", "faults"])
        for m, faults in enumerate(curve):
            writer.writerow([m, m * PAGE_KIB, faults])


def read_curve_csv(path: Path) -> list:
    with open(path, newline="") as f:
        return [int(row["faults"]) for row in csv.DictReader(f)]


def _title(argv: Sequence[str]) -> str:
    return " ".join([Path(argv[0]).name] + list(argv[1:]))[:70]


def plot_curves(curves: dict, path: Path, title: str) -> Path:
    """Fault curves, one line per label (faults on a log scale, memory in KiB),
    each from 1 page to its largest distance."""
    # imported here: only the plot needs it. A Figure of its own, not pyplot's global state: the evaluation
    # draws these from steps that run side by side in threads.
    from matplotlib.figure import Figure
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    for label, curve in curves.items():
        ax.plot([m * PAGE_KIB for m in range(1, len(curve))], curve[1:], label=label or None,
                drawstyle="steps-post")
    ax.set_xlabel("resident memory (KiB)")
    ax.set_ylabel("page faults under LRU (log scale)")
    ax.set_yscale("log")
    compulsory = [c[-1] for c in curves.values() if c]
    if compulsory:  # the memory-pressure range: up to 20x the compulsory faults (tiny memories fault on everything)
        ax.set_ylim(0.8 * min(compulsory), min(max(c[0] for c in curves.values() if c), 20 * max(compulsory)))
    ax.set_title(title, fontsize=9)
    if any(curves):
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


# ---- the command --------------------------------------------------------------------

def describe(figures: dict) -> str:
    compulsory, knee_pages = figures["compulsory_faults"], figures["knee_pages"]
    return "\n".join([
        f"{figures['references']:,} references to {figures['distinct_pages']:,} distinct pages "
        f"({figures['distinct_pages'] * PAGE_KIB:,} KiB); {figures['discarded_pages']:,} pages given back to the "
        f"kernel, {figures['refilled_pages']:,} touched again; {compulsory:,} compulsory faults",
        f"faults fall to within {KNEE_TOLERANCE:.0%} of compulsory at {knee_pages:,} pages "
        f"({knee_pages * PAGE_KIB:,} KiB of memory)",
        f"working set: at most {figures['peak_working_set']:,} pages per {figures['window_references']:,} references",
    ] + [f"swap prefetching at {p['memory_pages']:,} pages: {p['misses']:,} misses, {p['prefetchable']:,} prefetchable"
         for p in figures["prefetch"]])


def command(args) -> int:
    figures = measure(args.command, out_dir=args.output, quiet=False, window=args.window, timeout_s=args.timeout,
                      preload=args.allocator.preload(), prefetch_memory=args.prefetch_memory or ())
    print(f"strata-lab pages: {args.output}/pages.json, curve.csv, curve.png")
    print(describe(figures))
    return exit_status(figures, "strata-lab pages")

