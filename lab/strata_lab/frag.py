"""The fragmentation meter (Vam paper, §4.4): memory in use = resident pages
of the heap mappings, sampled from /proc/PID/smaps; live data = bytes requested
and not freed, from the profiler's exact accounting. Ratio = peak memory in
use / peak live bytes.

Heap mappings are the process's private anonymous memory: [heap] (brk) and
every anonymous mapping (no file, inode 0, including named [anon:...] ones),
which is where malloc implementations get memory. Excluded: file mappings,
the stack, [vdso]/[vvar], and the lab's own bookkeeping (mapped from a memfd
"strata-lab", so it is a file mapping). Thread stacks are anonymous mappings
and so are counted: a program with many threads shows them as overhead."""
import csv
import json
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import paths, profile, runner
from .errors import LabError

_EXCLUDED_SPECIAL = {"[stack]", "[vdso]", "[vvar]", "[vsyscall]", "[uprobes]"}


def heap_resident_bytes(smaps_text: str) -> int:
    """Sum of Rss + Swap over the heap mappings of one smaps listing."""
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
    return total


def read_live_mirror(path: Path):
    """(live_bytes, live_objects) from a STRATA_LAB_LIVE_OUT file, or None if not yet written."""
    try:
        with open(path, "rb") as f:
            data = f.read(48)
    except OSError:
        return None
    if len(data) < 48 or data[:8] != b"STRLIVE1":
        return None
    _, live_bytes, live_objects, _, _, _ = struct.unpack("<8sQQQQQ", data)
    return live_bytes, live_objects


@dataclass
class Sampler:
    live_file: Path
    start_ns: int = field(default_factory=time.monotonic_ns)
    rows: list = field(default_factory=list)  # (seconds, heap_bytes, live_bytes, live_objects)

    def __call__(self, pid: int) -> None:
        try:
            heap = heap_resident_bytes(Path(f"/proc/{pid}/smaps").read_text())
        except (OSError, ValueError):
            return  # exiting between samples
        live = read_live_mirror(self.live_file) or (0, 0)
        if heap == 0:
            return  # a zombie or not yet exec'd
        self.rows.append(((time.monotonic_ns() - self.start_ns) / 1e9, heap, live[0], live[1]))

    @property
    def peak_heap_bytes(self) -> int:
        return max((row[1] for row in self.rows), default=0)

    def write_csv(self, path) -> None:
        with open(path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["seconds", "heap_resident_bytes", "live_bytes", "live_objects"])
            writer.writerows(self.rows)


def summarize(sampler: Sampler, peak_live_bytes: int, peak_live_objects: int) -> dict:
    peak_heap = sampler.peak_heap_bytes
    return {"peak_heap_resident_bytes": peak_heap, "peak_live_bytes": peak_live_bytes,
            "peak_live_objects": peak_live_objects,
            "fragmentation": peak_heap / peak_live_bytes if peak_live_bytes else None,
            "samples": len(sampler.rows)}


def describe(summary: dict) -> str:
    ratio = summary["fragmentation"]
    return (f"peak memory in use {summary['peak_heap_resident_bytes'] / 2**20:.2f} MiB, "
            f"peak live {summary['peak_live_bytes'] / 2**20:.2f} MiB ({summary['peak_live_objects']:,} objects), "
            f"fragmentation {ratio:.3f}" if ratio is not None else "no live data: ratio undefined") + \
        f" ({summary['samples']} samples)"


def command(args) -> int:
    if args.interval <= 0:
        raise LabError(f"--interval {args.interval}: must be > 0 ms")
    preload = [str(paths.shim("profile"))] + args.allocator.preload()
    with tempfile.TemporaryDirectory(prefix="strata-frag-") as tmp:
        live_file = Path(tmp) / "live"
        sampler = Sampler(live_file)
        variables = {"STRATA_LAB_PROFILE_OUT": f"{tmp}/profile.%p.json", "STRATA_LAB_LIVE_OUT": live_file}
        result = runner.run(args.command, preload, variables, sampler=sampler, interval_s=args.interval / 1000)
        result.fail_if_not_ok("no fragmentation is reported for a failed run")
        data = profile.load(Path(tmp) / f"profile.{result.pid}.json")
    summary = summarize(sampler, data["peak_live_bytes"], data["peak_live_objects"])
    summary.update({"allocator": args.allocator.name, "command": list(args.command),
                    "peak_rss_bytes": result.peak_rss_bytes, "interval_ms": args.interval})
    if args.csv:
        sampler.write_csv(args.csv)
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    print(f"strata-lab frag: {args.allocator.name}: {describe(summary)}")
    return 0
