"""Adaptive rounds: after the base rounds, the cells of claims whose interval
still straddles their threshold get more rounds, one interleaved round at a
time, until every claim decides, a cell reaches max_rounds, or the time
budget would be overrun. The claims are judged from the results folder
itself (report.claims_of), exactly as the report will judge them.

Which claims a round takes: each undecided claim's rounds still needed are
projected from its intervals (an interval's half-width shrinks as 1/sqrt(n);
the rounds at which the bound nearest the threshold would clear it, the
estimate staying where it is), and its cost to decide is those rounds times
one round of its cells. A round takes the claims that can decide within
max_rounds, cheapest to decide first, as many as the budget left would carry
to their decision; only when none can does it take every undecided claim's
cells (as before: a whole round, or, when that no longer fits, the claims whose
cells fit, cheapest first: a partial round). Without it, a round ran every
undecided claim's cells, 100-300 runs in the default config, among them
claims whose estimate sits on the threshold and cannot decide in any budget:
the budget ran out after one or two rounds, and a cheap claim near deciding
(reaps.within-10: 14 cells) never got past 6 rounds (docs/lab.md).

Adding rounds until a claim decides is a sequential design: with a fixed 95%
interval per look, a claim near its threshold has more than a 5% chance of
being decided wrongly at some look. The budget bounds the number of looks
(a few), and the report says how many rounds each cell got."""
import dataclasses
import math
import statistics
import time
from dataclasses import dataclass, field

from ..claims import HELD, INCONCLUSIVE


@dataclass
class Budget:
    seconds: float            # the whole evaluation's
    started: float            # time.monotonic() at its start
    max_rounds: int
    extra_rounds: int = 0
    extra_runs: int = 0
    partial_rounds: int = 0   # extra rounds that took only the undecided claims that fit the budget
    focused_rounds: int = 0   # extra rounds that took only the claims projected to decide (promising_cells)
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
                "partial_rounds": self.partial_rounds, "focused_rounds": self.focused_rounds, "stopped": self.stopped}


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


def _point(estimate):
    return dataclasses.replace(estimate, low=estimate.value, high=estimate.value)


def _scale(values: list):
    """The scale the interval shrinks on: logarithmic for ratios (all positive), linear for counts, fractions
    and differences (a claim "below 0" has a threshold no logarithm takes)."""
    return math.log if all(x > 0 for x in values) else float


def _needed(estimate, hold, criterion) -> float:
    """Rounds (in all) at which this undecided estimate's interval would clear the threshold(s) it straddles, the
    estimate staying put and the half-width shrinking as 1/sqrt(n): toward held by `hold` (the estimate that judges
    held) when the estimate lies on the claim's side, else toward not held by `estimate` (the corrected one).
    inf when it sits on a threshold; 0 when there is no interval yet (a round is what it needs)."""
    if estimate is None:
        return 0.0
    e = hold if criterion.side(_point(estimate)) == HELD else estimate
    thresholds = [criterion.threshold] if hasattr(criterion, "threshold") else [criterion.low, criterion.high]
    scale = _scale([estimate.value, e.low, e.high, *thresholds])
    v = scale(estimate.value)
    needed = []
    for t in map(scale, thresholds):
        if v == t:
            return math.inf
        bound = scale(e.high if v < t else e.low)   # the interval's end toward this threshold
        if (bound - t) * (v - t) > 0:
            continue                                   # already clear of it
        needed.append(e.n * ((bound - v) / (t - v)) ** 2)
    return max(needed, default=float(e.n))


def rounds_to_decide(claim) -> float:
    """The rounds (in all) after which the claim is projected to decide: a program projected to break it decides
    it alone; otherwise every undecided program must hold. inf when nothing can be projected."""
    if not claim.undecided:
        return math.inf
    projections = {}
    for k in claim.undecided:
        e = claim.estimates.get(k)
        projections[k] = _needed(e, claim.hold_estimate(k) if e is not None else None, claim.criterion)
    breaking = [n for k, n in projections.items() if claim.estimates.get(k) is not None
                and claim.criterion.side(_point(claim.estimates[k])) != HELD]
    if breaking and claim.at_least is None:
        return min(breaking)
    return max(projections.values())


def promising_cells(claims: list, cells: list, budget: Budget) -> list:
    """The cells of the claims that can decide within max_rounds, cheapest to decide first, while the budget left
    carries them to their decision; [] when none can."""
    eligible = {cell.key: cell for cell in cells}
    chosen, committed = {}, 0.0
    ranked = []
    for claim in claims:
        mine = [eligible[k] for k in sorted(claim.cells) if k in eligible]
        if claim.verdict != INCONCLUSIVE or len(mine) < len(claim.cells):
            continue   # decided, or some cell at max_rounds: its pairs could not all get a round
        done = min((e.n for e in claim.estimates.values() if e is not None), default=0)
        needed = rounds_to_decide(claim)
        if needed > budget.max_rounds:
            continue
        rounds = max(1, math.ceil(needed) - done)
        ranked.append((rounds * budget.estimate(mine), claim.key, mine))
    for cost, _, mine in sorted(ranked, key=lambda x: (x[0], x[1])):
        if committed + cost <= budget.left():
            chosen.update({cell.key: cell for cell in mine})
            committed += cost
    if chosen and budget.estimate(list(chosen.values())) > budget.left():
        return []
    return [cell for cell in cells if cell.key in chosen]   # in the plan's order


def next_round(claims: list, planned: dict, rounds_done: dict, budget: Budget) -> list:
    """The cells of the next extra round, or [] (and budget.stopped says why)."""
    cells = undecided_cells(claims, planned, rounds_done, budget.max_rounds)
    if not any(c.verdict == INCONCLUSIVE for c in claims):
        budget.stopped = "every claim decided"
    elif not cells:
        budget.stopped = f"the undecided claims' cells reached {budget.max_rounds} rounds or cannot run more"
    elif promising := promising_cells(claims, cells, budget):
        budget.focused_rounds += 1
        return promising
    elif budget.estimate(cells) <= budget.left():
        return cells
    elif partial := affordable_cells(claims, cells, budget):
        budget.partial_rounds += 1
        return partial
    else:
        budget.stopped = "the time budget ran out"
    return []
