"""Adaptive rounds: after the base rounds, the cells of claims whose interval
still straddles their threshold get more rounds, one interleaved round at a
time, until every claim decides, a cell reaches max_rounds, or the time
budget would be overrun. When a whole round no longer fits, the round takes
the undecided claims whose cells fit, cheapest first (a partial round). The claims are judged from the results folder
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
    partial_rounds: int = 0   # extra rounds that took only the undecided claims that fit the budget
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
                "partial_rounds": self.partial_rounds, "stopped": self.stopped}


def undecided_cells(claims: list, planned: dict, rounds_done: dict, max_rounds: int) -> list:
    """The planned cells that an inconclusive claim depends on and that may still get a round."""
    keys = {k for c in claims if c.verdict == INCONCLUSIVE for k in c.cells}
    return [cell for cell in planned if cell.key in keys and rounds_done.get(cell, 0) < max_rounds]


def affordable_cells(claims: list, cells: list, budget: Budget) -> list:
    """When a round of every undecided claim's cells would overrun the budget:
    the cells of as many of those claims as fit, cheapest claim first. A claim
    gets all its cells or none, so its ratios stay paired within the round."""
    eligible = {cell.key: cell for cell in cells}
    def cells_of(claim) -> list:
        return [eligible[k] for k in sorted(claim.cells) if k in eligible]
    undecided = [c for c in claims if c.verdict == INCONCLUSIVE and cells_of(c)]
    chosen: dict = {}
    for claim in sorted(undecided, key=lambda c: (budget.estimate(cells_of(c)), c.key)):
        more = {cell.key: cell for cell in cells_of(claim) if cell.key not in chosen}
        if budget.estimate(list(chosen.values()) + list(more.values())) <= budget.left():
            chosen.update(more)
    return [cell for cell in cells if cell.key in chosen]   # in the plan's order


def next_round(claims: list, planned: dict, rounds_done: dict, budget: Budget) -> list:
    """The cells of the next extra round, or [] (and budget.stopped says why)."""
    cells = undecided_cells(claims, planned, rounds_done, budget.max_rounds)
    if not any(c.verdict == INCONCLUSIVE for c in claims):
        budget.stopped = "every claim decided"
    elif not cells:
        budget.stopped = f"the undecided claims' cells reached {budget.max_rounds} rounds or cannot run more"
    elif budget.estimate(cells) <= budget.left():
        return cells
    elif partial := affordable_cells(claims, cells, budget):
        budget.partial_rounds += 1
        return partial
    else:
        budget.stopped = "the time budget ran out"
    return []
