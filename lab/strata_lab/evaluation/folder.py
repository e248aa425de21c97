"""The results folder: its name, the results/latest link, its lock, and the
CSV files every measurement is appended to as it comes."""
import csv
import datetime
import fcntl
import json
import os
from pathlib import Path
from typing import Optional

from .. import paths
from ..errors import LabError

RESULTS_ROOT = paths.REPO_ROOT / "results"

RUN_FIELDS = ["round", "order", "workload", "kind", "mode", "scale", "seed", "precondition_seed", "env_padding",
              "allocator", "preset", "status", "exit_status", "checksum", "program_seconds", "cpu_seconds",
              "program_cpu_seconds", "precondition_seconds", "wall_seconds", "peak_rss_bytes", "parent_rss_bytes", "kept_bytes", "started",
              "stderr_tail"]
MEMORY_FIELDS = ["round", "workload", "kind", "mode", "scale", "seed", "precondition_seed", "allocator", "preset",
                 "status", "exit_status", "checksum", "peak_live_bytes", "peak_in_use_bytes", "fragmentation",
                 "samples", "wall_seconds", "stderr_tail"]
PROFILE_FIELDS = ["workload", "mode", "scale", "seed", "status", "error", "path", "checksum", "total_objects",
                  "total_bytes", "average_size", "peak_live_objects", "peak_live_bytes", "total_to_peak_bytes",
                  "realloc_calls", "free_calls", "seconds"]
VALGRIND_FIELDS = ["workload", "mode", "scale", "run_scale", "seed", "allocator", "preset", "tool", "status", "instructions",
                   "d1_misses", "ll_misses", "data_refs", "seconds", "error"]
BENCH_FIELDS = ["bench", "round", "contender", "allocator", "status", "seconds", "cpu_seconds", "instructions",
                "peak_held_bytes", "peak_rss_added", "peak_live_bytes", "allocated_bytes", "frees", "checksum",
                "error", "scale", "total_drag", "peak_in_use_bytes", "peak_ideal_bytes",
                "mode", "references", "distinct_pages", "knee_pages", "peak_working_set",  # [bench.pages]
                "prefetch_memory_pages", "prefetch_misses", "prefetchable",
                "memory_operations_percent"]  # [bench.memory-operations]


def results_folder(output: Optional[str]) -> Path:
    if output:
        return Path(output)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = RESULTS_ROOT / stamp
    suffix = 1
    while folder.exists():
        suffix += 1
        folder = RESULTS_ROOT / f"{stamp}-{suffix}"
    return folder


def point_latest(folder: Path) -> None:
    """results/latest -> the newest folder (only for folders under results/)."""
    if folder.resolve().parent != RESULTS_ROOT.resolve():
        return
    link = RESULTS_ROOT / "latest"
    temporary = RESULTS_ROOT / f".latest.{os.getpid()}"
    if temporary.is_symlink():
        temporary.unlink()
    temporary.symlink_to(folder.name)
    os.replace(temporary, link)


class FolderLock:
    """One evaluation per folder: an flock on <folder>/.evaluate.lock."""

    def __init__(self, folder: Path):
        self.path = folder / ".evaluate.lock"
        self.file = None

    def __enter__(self):
        self.file = open(self.path, "a+")
        try:
            fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.file.close()
            raise LabError(f"{self.path.parent}: another evaluation is writing into this folder "
                           f"(it holds {self.path}); refusing to run a second one there") from None
        self.file.seek(0)
        self.file.truncate()
        self.file.write(f"{os.getpid()}\n")
        self.file.flush()
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.file, fcntl.LOCK_UN)
        self.file.close()


class CsvLog:
    """Appends rows as they come (flushed: an interrupted run keeps them)."""

    def __init__(self, path: Path, fields: list):
        self.fields = fields
        self.file = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=fields, extrasaction="ignore")
        self.writer.writeheader()
        self.file.flush()

    def write(self, row: dict) -> None:
        self.writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in self.fields})
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def write_json(path: Path, data) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=2, default=str) + "\n")
    os.replace(temporary, path)
