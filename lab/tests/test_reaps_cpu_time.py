"""The reaps section pairs the programs' CPU time (program_cpu_seconds), which a busy machine's preemptions leave
out; results from before the precondition shim recorded it are judged on wall time."""
import csv

from strata_lab import report
from strata_lab.claims import HELD, NOT_HELD
from synthetic import Synthetic


def _preempted_reap_runs(folder, keep_cpu_time: bool = True):
    """Every reap run on glibc waited 40% of its run for a CPU: its wall time is 1.4x, its CPU time unchanged."""
    path = folder / "runs.csv"
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    fields = list(rows[0])
    for row in rows:
        if row["mode"] == "reap" and row["allocator"] == "glibc":
            row["program_seconds"] = str(float(row["program_seconds"]) * 1.4)
    if not keep_cpu_time:
        fields.remove("program_cpu_seconds")
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return folder


def _within_ten(folder):
    return {c.key: c for c in report.claims_of(folder)}["reaps.within-10"]


def test_preemption_of_the_reap_runs_does_not_decide_the_claim(tmp_path):
    folder = _preempted_reap_runs(Synthetic().write(tmp_path / "results"))
    claim = _within_ten(folder)
    assert claim.verdict == HELD, claim.interval_text()
    assert "CPU time" in claim.quantity


def test_results_without_cpu_time_are_judged_on_wall_time(tmp_path):
    folder = _preempted_reap_runs(Synthetic().write(tmp_path / "results"), keep_cpu_time=False)
    assert _within_ten(folder).verdict == NOT_HELD
