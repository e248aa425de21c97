"""The evaluation's results data, from the raw files only (runs.csv,
memory.csv, ...): typed rows, checksum verdicts, cells with medians and
min-max, ratios paired within a round. Intervals and verdicts are intervals.py's
and claims.py's."""
import csv
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

INT_FIELDS = {"round", "order", "scale", "seed", "peak_rss_bytes", "parent_rss_bytes", "peak_heap_resident_bytes", "kept_bytes",
              "profile_peak_live_bytes", "total_objects", "total_bytes", "peak_live_objects", "peak_live_bytes",
              "realloc_calls", "free_calls", "instructions", "d1_misses", "ll_misses", "data_refs",
              "peak_held_bytes", "peak_rss_added", "allocated_bytes", "peak_in_use_bytes", "peak_ideal_bytes",
              "samples", "precondition_seed", "env_padding",
              "references", "distinct_pages", "knee_pages", "peak_working_set",  # [bench.pages]
              "prefetch_memory_pages", "prefetch_misses", "prefetchable"}
FLOAT_FIELDS = {"program_seconds", "precondition_seconds", "wall_seconds", "fragmentation", "seconds",
                "average_size", "total_to_peak_bytes", "total_drag", "cpu_seconds",
                "program_cpu_seconds", "memory_operations_percent"}


def _typed(row: dict) -> dict:
    out = {}
    for key, value in row.items():
        if value == "" or value is None:
            out[key] = None
        elif key in INT_FIELDS:
            out[key] = int(float(value))
        elif key in FLOAT_FIELDS:
            out[key] = float(value)
        else:
            out[key] = value
    return out


def read_csv(path: Path) -> list:
    if not Path(path).is_file():
        return []
    with open(path, newline="") as f:
        return [_typed(row) for row in csv.DictReader(f)]


@dataclass(frozen=True)
class Summary:
    median: float
    low: float
    high: float
    n: int

    def ratio_text(self, digits: int = 3) -> str:
        return f"{self.median:.{digits}f} ({self.low:.{digits}f}–{self.high:.{digits}f}, n={self.n})"


def summarize(values) -> Optional[Summary]:
    """Median with min–max of the values that are not None; None if there are none."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return Summary(statistics.median(values), min(values), max(values), len(values))


# ---------------------------------------------------------------------------
# Checksums: every run against its workload's reference.

def references(runs: list, profiles: list, workloads_meta: dict) -> dict:
    """(workload, scale, seed) -> the reference checksum: the stored one of
    workload.json when scale and seed are its test's, else the checksum most
    runs and profiles of that workload, scale and seed agree on (all modes and
    allocators must give the same)."""
    votes = {}
    for row in list(profiles) + list(runs):
        if row.get("checksum") and row.get("status") == "ok":
            votes.setdefault((row["workload"], row["scale"], row["seed"]), Counter())[row["checksum"]] += 1
    refs = {}
    for key, counter in votes.items():
        refs[key] = counter.most_common(1)[0][0]
    for name, info in (workloads_meta or {}).items():
        test = info.get("test") or {}
        if test.get("checksum"):
            refs[(name, test.get("scale"), test.get("seed"))] = test["checksum"]
    return refs


def judge(runs: list, refs: dict) -> list:
    """Each run gets a verdict: "ok", its failure status, or "mismatch" (an ok
    exit with the wrong checksum: a failure, never averaged in)."""
    for run in runs:
        status = run.get("status") or "failed"
        if status == "ok":
            reference = refs.get((run["workload"], run["scale"], run["seed"]))
            run["reference"] = reference
            run["verdict"] = "ok" if reference is None or run.get("checksum") == reference else "mismatch"
        else:
            run["verdict"] = status
    return runs


def good(run: dict) -> bool:
    return run.get("verdict") == "ok"


# ---------------------------------------------------------------------------
# Cells and pairs.

def cell_key(run: dict) -> tuple:
    return (run["workload"], run["mode"], run["scale"], run["allocator"], run["preset"])


@dataclass
class CellStats:
    key: tuple
    runs: int
    ok: int
    failures: Counter
    time: Optional[Summary]
    rss: Optional[Summary]
    frag: Optional[Summary]     # memory runs only (memory.csv): peak in use / peak live
    heap: Optional[Summary]     # memory runs only: peak pages in use (Vam §4.4)
    cpu: Optional[Summary] = None  # user + system seconds of the program


def cells(runs: list, time_metric=lambda workload: "program_seconds") -> dict:
    """Each cell's statistics; its time is time_metric(workload) of its good runs (the report's choice of time)."""
    grouped = {}
    for run in runs:
        grouped.setdefault(cell_key(run), []).append(run)
    out = {}
    for key, group in grouped.items():
        ok = [r for r in group if good(r)]
        out[key] = CellStats(key, len(group), len(ok), Counter(r["verdict"] for r in group if not good(r)),
                             summarize(r.get(time_metric(key[0])) for r in ok),
                             summarize(r.get("peak_rss_bytes") for r in ok),
                             summarize(r.get("fragmentation") for r in ok),
                             summarize(r.get("peak_in_use_bytes") for r in ok),
                             summarize(r.get("cpu_seconds") for r in ok))
    return out


def by_round(runs: list, key: tuple, metric: str = "program_seconds") -> dict:
    """round -> the metric of the cell's good run in that round."""
    return {r["round"]: r[metric] for r in runs
            if cell_key(r) == key and good(r) and r.get(metric) is not None}


def paired_ratios(runs: list, numerator: tuple, denominator: tuple, metric: str = "program_seconds") -> list:
    """numerator/denominator for every round in which both cells have a good run."""
    top = by_round(runs, numerator, metric)
    bottom = by_round(runs, denominator, metric)
    return [top[r] / bottom[r] for r in sorted(top) if r in bottom and bottom[r]]


def paired(runs: list, numerator: tuple, denominator: tuple, metric: str = "program_seconds") -> Optional[Summary]:
    return summarize(paired_ratios(runs, numerator, denominator, metric))


def geometric_mean(values) -> Optional[float]:
    values = [v for v in values if v]
    if not values:
        return None
    return statistics.geometric_mean(values)
