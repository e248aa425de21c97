"""Adaptive rounds: after the base rounds, the cells of claims whose interval
still straddles their threshold get more rounds, one interleaved round at a
time, until every claim decides, a cell reaches max_rounds, or the time
budget would be overrun. The claims are judged from the results folder
itself (report.claims_of), exactly as the report will judge them.

Adding rounds until a claim decides is a sequential design: with a fixed 95%
interval per look, a claim near its threshold has more than a 5% chance of
being decided wrongly at some look. The budget bounds the number of looks
(a few), and the report says how many rounds each cell got."""
import statistics
import time
from dataclasses import dataclass, field

from ..claims import INCONCLUSIVE


@dataclass
class Budget:
    seconds: float            # the whole evaluation's
    started: float            # time.monotonic() at its start
    max_rounds: int
    extra_rounds: int = 0
    extra_runs: int = 0
    stopped: str = ""
    durations: dict = field(default_factory=dict)   # cell -> seconds of its runs

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.started)

    def estimate(self, cells: list) -> float:
        """Seconds one round of these cells will take (their median run so far)."""
        every = [d for ds in self.durations.values() for d in ds]
        fallback = statistics.median(every) if every else 1.0
        return sum(statistics.median(self.durations[c]) if self.durations.get(c) else fallback for c in cells)

    def summary(self, base_rounds: int) -> dict:
        return {"budget_s": self.seconds, "used_s": round(time.monotonic() - self.started, 1),
                "base_rounds": base_rounds, "extra_rounds": self.extra_rounds, "extra_runs": self.extra_runs,
                "stopped": self.stopped}


def undecided_cells(claims: list, planned: dict, rounds_done: dict, max_rounds: int) -> list:
    """The planned cells that an inconclusive claim depends on and that may still get a round."""
    keys = {k for c in claims if c.verdict == INCONCLUSIVE for k in c.cells}
    return [cell for cell in planned if cell.key in keys and rounds_done.get(cell, 0) < max_rounds]


def next_round(claims: list, planned: dict, rounds_done: dict, budget: Budget) -> list:
    """The cells of the next extra round, or [] (and budget.stopped says why)."""
    cells = undecided_cells(claims, planned, rounds_done, budget.max_rounds)
    if not any(c.verdict == INCONCLUSIVE for c in claims):
        budget.stopped = "every claim decided"
    elif not cells:
        budget.stopped = f"the undecided claims' cells reached {budget.max_rounds} rounds or cannot run more"
    elif budget.estimate(cells) > budget.left():
        budget.stopped = "the time budget ran out"
    else:
        return cells
    return []
