"""Which time the report pairs: every section's time ratios, cells' times and
time claims read it here.

A single-threaded program's CPU time (user + system, end of preconditioning
to exit: `program_cpu_seconds`, which the precondition shim records for every
run) is what it ran, not how long it waited for a CPU. On a shared machine a
run's wall time gains a preemption's 10-40 ms at random, and that, not the
allocator, flipped verdicts between runs (docs/lab.md, "Evaluation"). So a
single-threaded program's time is its CPU time.

A multi-threaded program's CPU time adds its threads' times up, which says
nothing about how long it took: its time stays the wall time. A program is
multi-threaded when some run's CPU time exceeds its wall time (one thread
cannot run longer than the clock on the wall), measured, not declared.

Results from before the shim recorded CPU time are judged on wall time."""
from typing import Iterable

CPU_TIME, WALL_TIME = "program_cpu_seconds", "program_seconds"
TIME = "time"   # a metric name that stands for a workload's time as chosen here (Results.ratios resolves it)
# CPU time above wall time by more than this: threads ran in parallel (a single thread's CPU time can exceed
# its wall time only by the clocks' granularity, microseconds).
PARALLEL = 1.05
CPU_NAME, WALL_NAME = "CPU time", "wall time"
WHY = ("Times are the programs' CPU time (user + system, end of preconditioning to exit), paired within a round: "
       "every program here is single-threaded, and CPU time leaves out the preemptions a busy machine adds to "
       "wall time at random.")
WHY_WALL = "Times are wall times: these results record no CPU time (an evaluation from before it was recorded)."


class Timing:
    """The time metric of each workload of a results set (its timed runs)."""

    def __init__(self, runs: Iterable[dict]):
        runs = list(runs)
        self.cpu_recorded = any(run.get(CPU_TIME) is not None for run in runs)
        self.threaded = {run["workload"] for run in runs if _parallel(run)}

    def metric(self, workload: str) -> str:
        return CPU_TIME if self.cpu_recorded and workload not in self.threaded else WALL_TIME

    @property
    def name(self) -> str:
        """How the claims' quantities name the time they pair."""
        return CPU_NAME if self.cpu_recorded else WALL_NAME

    @property
    def why(self) -> str:
        return WHY if self.cpu_recorded else WHY_WALL

    def threaded_note(self, workloads: Iterable[str]) -> str:
        """What a claim's quantity adds when some of its programs ran threads (their wall time is paired)."""
        named = sorted(set(workloads) & self.threaded) if self.cpu_recorded else []
        if not named:
            return ""
        return (f"; wall time for {', '.join(named)}: multi-threaded (CPU time above wall time), and CPU time "
                "adds the threads' times up")


def _parallel(run: dict) -> bool:
    cpu, wall = run.get(CPU_TIME), run.get(WALL_TIME)
    return cpu is not None and wall is not None and wall > 0 and cpu > wall * PARALLEL
