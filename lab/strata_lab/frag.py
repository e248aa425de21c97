"""The fragmentation meter (Vam paper, §4.4): memory in use = pages in use
(touched, not discarded) of the heap mappings, read from /proc/PID/smaps; live
data = bytes requested and not freed, from the profiler's exact accounting.
Ratio = peak memory in use / peak live bytes.

measure_memory() makes one memory run: the profiler in its memory mode
(STRATA_LAB_MEMORY=1) touches every requested byte as it hands it out, so a
live byte is a byte in use, and measures memory in use itself at the moments
it can peak (new live peaks, growth of its anonymous memory; see
src/lab/heap_meter.hpp), so both peaks are measured the same way, at the
moments they happen. `strata-lab frag` is that run; its timer (--interval)
only draws the time series.

Heap mappings are the process's private anonymous memory: [heap] (brk) and
every anonymous mapping (no file, inode 0, including named [anon:...] ones),
which is where malloc implementations get memory. Excluded: file mappings,
the stack, [vdso]/[vvar], and the lab's own bookkeeping (mapped from a memfd
"strata-lab", so it is a file mapping). Thread stacks are anonymous mappings
and so are counted: a program with many threads shows them as overhead.

Child processes count too: every process of the program that runs under the
profiler publishes its live counters in a file of its own (live.<pid>); a
sample sums memory in use and live data over the processes alive at that
moment. Peaks shorter than the sampling interval are caught by the profiler
itself, which measures memory in use at each new peak of live bytes
(src/lab/heap_meter.hpp). When nothing was sampled at all, the ratio is
reported as "no sample", never as 0."""
import csv
import json
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import paths, profiling, runner
from .errors import LabError, ProgramFailed

_EXCLUDED_SPECIAL = {"[stack]", "[vdso]", "[vvar]", "[vsyscall]", "[uprobes]"}


def heap_resident_bytes(smaps_text: str) -> int:
    """Sum of Rss + Swap - LazyFree over the heap mappings of one smaps
    listing (LazyFree: pages given back with MADV_FREE, discarded though
    still counted in Rss until the kernel reclaims them)."""
    total = 0
    counting = False
    for line in smaps_text.splitlines():
        first = line.split(None, 1)[0] if line else ""
        if "-" in first and not first.endswith(":"):  # a mapping header: start-end perms offset dev inode [path]
            parts = line.split(None, 5)
            inode = parts[4] if len(parts) > 4 else "0"
            path = parts[5].strip() if len(parts) > 5 else ""
            counting = inode == "0" and (path == "" or path == "[heap]" or path.startswith("[anon:")) \
                and path not in _EXCLUDED_SPECIAL
        elif counting and (first == "Rss:" or first == "Swap:"):
            total += int(line.split()[1]) * 1024
        elif counting and first == "LazyFree:":
            total -= int(line.split()[1]) * 1024
    return max(total, 0)


@dataclass(frozen=True)
class LiveMirror:
    """One process's STRATA_LAB_LIVE_OUT file (src/lab/live_mirror.hpp)."""
    live_bytes: int
    live_objects: int
    peak_live_bytes: int
    peak_live_objects: int
    pid: int
    peak_heap_resident_bytes: int  # measured by the profiler at new live peaks
    heap_samples: int


_MIRROR = struct.Struct("<8sQQQQQQQ")


def read_live_mirror(path: Path) -> Optional[LiveMirror]:
    """A live-counter file, or None if not (yet) written."""
    try:
        with open(path, "rb") as f:
            data = f.read(_MIRROR.size)
    except OSError:
        return None
    if len(data) < _MIRROR.size or data[:8] != b"STRLIVE1":
        return None
    return LiveMirror(*_MIRROR.unpack(data)[1:])


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@dataclass
class Sampler:
    """Samples the program's processes: the root, and every process that
    publishes live counters in live_dir (children under the profiler)."""
    live_dir: Path
    start_ns: int = field(default_factory=time.monotonic_ns)
    rows: list = field(default_factory=list)  # (seconds, heap_bytes, live_bytes, live_objects, processes)

    def mirrors(self) -> dict:
        """pid -> LiveMirror of every process that published one."""
        found = {}
        for path in self.live_dir.glob("live.*"):
            mirror = read_live_mirror(path)
            if mirror is not None:
                found[mirror.pid] = mirror
        return found

    def __call__(self, pid: int) -> None:
        mirrors = self.mirrors()
        pids = {pid} | {p for p in mirrors if p != pid and _alive(p)}
        heap = live_bytes = live_objects = processes = 0
        for p in sorted(pids):
            try:
                resident = heap_resident_bytes(Path(f"/proc/{p}/smaps").read_text())
            except (OSError, ValueError):
                continue  # exited between samples
            if resident == 0:
                continue  # a zombie, or not yet exec'd
            heap += resident
            processes += 1
            if p in mirrors:
                live_bytes += mirrors[p].live_bytes
                live_objects += mirrors[p].live_objects
        if processes:
            self.rows.append(((time.monotonic_ns() - self.start_ns) / 1e9, heap, live_bytes, live_objects,
                              processes))

    def write_csv(self, path) -> None:
        write_series(self.rows, path)


def write_series(rows: list, path) -> None:
    """A sampler's rows as CSV."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["seconds", "heap_resident_bytes", "live_bytes", "live_objects", "processes"])
        writer.writerows(rows)


def summarize(sampler: Sampler, profiles: list) -> dict:
    """Peaks over the timer's samples and what each process measured at its
    own live peaks (profiles: the processes' profile dicts). With several
    processes the timer's sums are the simultaneous figures; a single
    process's own peak can only raise them."""
    timer_heap = max((row[1] for row in sampler.rows), default=0)
    at_peaks = [p.get("peak_heap_resident_bytes_at_peaks", 0) for p in profiles]
    peak_heap = max([timer_heap] + at_peaks)
    peak_live = max([max((row[2] for row in sampler.rows), default=0)] +
                    [p["peak_live_bytes"] for p in profiles])
    peak_objects = max([max((row[3] for row in sampler.rows), default=0)] +
                       [p["peak_live_objects"] for p in profiles])
    samples = len(sampler.rows) + sum(p.get("heap_samples_at_peaks", 0) for p in profiles)
    return {"peak_heap_resident_bytes": peak_heap if samples else None, "peak_live_bytes": peak_live,
            "peak_live_objects": peak_objects,
            "fragmentation": peak_heap / peak_live if samples and peak_live else None,
            "samples": len(sampler.rows), "samples_at_live_peaks": samples - len(sampler.rows),
            "processes": len(profiles)}


def _peaks_text(in_use: Optional[int], summary: dict, why_no_sample: str) -> str:
    """The two peaks and their ratio, in words."""
    ratio = summary["fragmentation"]
    if in_use is None:
        return f"no sample of memory in use ({why_no_sample}): ratio not measured"
    if ratio is None:
        return "no live data: ratio undefined"
    return (f"peak memory in use {in_use / 2**20:.2f} MiB, "
            f"peak live {summary['peak_live_bytes'] / 2**20:.2f} MiB ({summary['peak_live_objects']:,} objects), "
            f"fragmentation {ratio:.3f}")


def _processes_text(summary: dict) -> str:
    return f", {summary['processes']} processes" if summary.get("processes", 1) > 1 else ""


def describe(summary: dict) -> str:
    text = _peaks_text(summary["peak_heap_resident_bytes"], summary, "the program ended before the first one")
    return text + (f" ({summary['samples']} timed samples, {summary['samples_at_live_peaks']} at live peaks"
                   f"{_processes_text(summary)})")


def _run_status(result: runner.RunResult, root_profile: Optional[dict]) -> str:
    if result.timed_out:
        return "timeout"
    if result.returncode < 0:
        return "crashed"
    if result.returncode > 0 or root_profile is None:
        return "failed"
    return "ok"


def summarize_memory_run(profiles: list, sampler: Optional[Sampler] = None) -> dict:
    """Both peaks of a memory run, from what each process's profiler measured
    at its own events (profiles: root first). Several processes are summed,
    each with its own peaks (an upper bound of what they held at once, on both
    sides of the ratio). A timer's samples (sampler), if any, are real
    readings too: they can only raise the figures."""
    peak_live = sum(p["peak_live_bytes"] for p in profiles)
    peak_objects = sum(p["peak_live_objects"] for p in profiles)
    in_use = sum(p.get("peak_heap_resident_bytes_at_peaks", 0) for p in profiles)
    samples = sum(p.get("heap_samples_at_peaks", 0) for p in profiles)
    rows = sampler.rows if sampler is not None else []
    in_use = max([in_use] + [row[1] for row in rows])
    peak_live = max([peak_live] + [row[2] for row in rows])
    measured = samples + len(rows) > 0
    return {"peak_live_bytes": peak_live, "peak_live_objects": peak_objects,
            "peak_in_use_bytes": in_use if measured else None,
            "fragmentation": in_use / peak_live if measured and peak_live else None,
            "samples": samples, "timed_samples": len(rows),
            "growth_checks": sum(p.get("memory_growth_checks", 0) for p in profiles),
            "processes": len(profiles)}


def measure_memory(argv, allocator_preload: list, variables: dict, timeout_s: Optional[float],
                   cwd=None, interval_s: Optional[float] = None, capture: bool = True) -> dict:
    """One memory run of a program: the profiler in memory mode, then the
    preconditioner (its settings in `variables`, with the workload's own), then
    the allocator (allocator_preload). Preconditioning's kept objects are
    allocated through the profiler, so they are live data and their pages in
    use. Returns status ("ok", "crashed", "failed", "timeout"), exit_status,
    peak_live_bytes (kept objects included), peak_live_objects,
    peak_in_use_bytes and fragmentation (None when nothing was measured),
    samples (smaps reads at events), growth_checks, processes, kept_bytes,
    wall_seconds, peak_rss_bytes, stdout and stderr_tail (with capture), and
    `series` (the timer's rows) when interval_s is given."""
    preload = [str(paths.shim("profile")), str(paths.shim("precondition"))] + list(allocator_preload)
    with tempfile.TemporaryDirectory(prefix="strata-frag-") as tmp:
        run_variables = dict(variables)
        run_variables.update({"STRATA_LAB_MEMORY": "1", "STRATA_LAB_PROFILE_OUT": f"{tmp}/profile.%p.json",
                              "STRATA_LAB_LIVE_OUT": f"{tmp}/live.%p",
                              "STRATA_LAB_PRECOND_REPORT": f"{tmp}/precondition.%p.json"})
        sampler = Sampler(Path(tmp)) if interval_s else None
        result = runner.run(argv, preload, run_variables, sampler=sampler, interval_s=interval_s or 0.01,
                            capture=capture, timeout_s=timeout_s, cwd=cwd)
        root = Path(tmp) / f"profile.{result.pid}.json"
        root_profile = profiling.load(root) if root.exists() else None
        profiles = [root_profile] if root_profile else []
        profiles += [profiling.load(path) for path in sorted(Path(tmp).glob("profile.*.json")) if path != root]
        report_path = Path(tmp) / f"precondition.{result.pid}.json"
        report = json.loads(report_path.read_text()) if report_path.exists() else None
    status = _run_status(result, root_profile)
    summary = summarize_memory_run(profiles, sampler) if status == "ok" else {
        "peak_live_bytes": None, "peak_live_objects": None, "peak_in_use_bytes": None, "fragmentation": None,
        "samples": 0, "timed_samples": 0, "growth_checks": 0, "processes": len(profiles)}
    summary.update({"status": status, "exit_status": result.status(), "kept_bytes": report.get("kept_bytes") if report
                    else None, "wall_seconds": result.wall_ns / 1e9,
                    "peak_rss_bytes": runner.program_peak_rss(result, report), "command": list(argv)})
    if capture:
        summary.update({"stdout": result.stdout, "stderr_tail": result.stderr_tail})
    if sampler is not None:
        summary["series"] = sampler.rows
    return summary


def describe_memory_run(summary: dict) -> str:
    text = _peaks_text(summary["peak_in_use_bytes"], summary, "live data never reached 4 KiB")
    return text + (f" ({summary['samples']} samples at events, {summary['growth_checks']} growth checks, "
                   f"{summary['timed_samples']} timed samples{_processes_text(summary)})")


def command(args) -> int:
    if args.interval <= 0:
        raise LabError(f"--interval {args.interval}: must be > 0 ms")
    summary = measure_memory(args.command, args.allocator.preload(), {}, None, interval_s=args.interval / 1000,
                             capture=False)
    if summary["status"] != "ok":
        raise ProgramFailed(f"the program {' '.join(args.command)} {summary['exit_status']}; "
                            "no fragmentation is reported for a failed run")
    series = summary.pop("series")
    summary.update({"allocator": args.allocator.name, "interval_ms": args.interval,
                    "peak_heap_resident_bytes": summary["peak_in_use_bytes"]})
    if args.csv:
        write_series(series, args.csv)
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    print(f"strata-lab frag: {args.allocator.name}: {describe_memory_run(summary)}")
    return 0

