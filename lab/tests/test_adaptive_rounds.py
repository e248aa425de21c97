"""Adaptive rounds (evaluation/adaptive.py): which cells the next extra round
takes, and the partial round when a whole one would overrun the budget."""
import time
from dataclasses import dataclass, field

from strata_lab.claims import INCONCLUSIVE
from strata_lab.evaluation import adaptive
from strata_lab.evaluation.plan import Cell


@dataclass
class FakeClaim:
    key: str
    verdict: str
    cells: set = field(default_factory=set)


def cell(workload: str, mode: str) -> Cell:
    return Cell(workload, mode, 1, "glibc", "Adv0")


def budget_with(seconds_left: float, durations: dict) -> adaptive.Budget:
    b = adaptive.Budget(seconds=seconds_left, started=time.monotonic(), max_rounds=20)
    b.durations = {c: list(d) for c, d in durations.items()}
    return b


A1, A2 = cell("a", "reap"), cell("a", "custom")      # claim "cheap": 2 s a round
B1, B2 = cell("b", "reap"), cell("b", "custom")      # claim "dear": 20 s a round
PLANNED = {A1: 5, A2: 5, B1: 5, B2: 5}
DURATIONS = {A1: [1.0], A2: [1.0], B1: [10.0], B2: [10.0]}
CHEAP = FakeClaim("cheap", INCONCLUSIVE, {A1.key, A2.key})
DEAR = FakeClaim("dear", INCONCLUSIVE, {B1.key, B2.key})


def test_a_whole_round_when_it_fits():
    b = budget_with(100.0, DURATIONS)
    assert set(adaptive.next_round([CHEAP, DEAR], PLANNED, {}, b)) == {A1, A2, B1, B2}
    assert b.partial_rounds == 0 and b.stopped == ""


def test_a_partial_round_takes_the_claims_that_fit_with_all_their_cells():
    b = budget_with(15.0, DURATIONS)   # the whole round needs 22 s; the cheap claim 2 s, the dear one 20 s
    assert adaptive.next_round([DEAR, CHEAP], PLANNED, {}, b) == [A1, A2]
    assert b.partial_rounds == 1 and b.stopped == ""


def test_no_round_when_not_even_the_cheapest_claim_fits():
    b = budget_with(1.5, DURATIONS)
    assert adaptive.next_round([CHEAP, DEAR], PLANNED, {}, b) == []
    assert b.stopped == "the time budget ran out"


def test_a_claim_with_a_cell_at_max_rounds_runs_only_its_other_cells():
    b = budget_with(15.0, DURATIONS)
    b.max_rounds = 6
    done = {A1: 6, A2: 5, B1: 5, B2: 5}
    assert adaptive.next_round([CHEAP, DEAR], PLANNED, done, b) == [A2]


def test_decided_claims_get_no_round():
    b = budget_with(100.0, DURATIONS)
    decided = FakeClaim("done", "held", {A1.key})
    assert adaptive.next_round([decided], PLANNED, {}, b) == []
    assert b.stopped == "every claim decided"


def test_the_summary_counts_partial_rounds():
    b = budget_with(15.0, DURATIONS)
    adaptive.next_round([CHEAP, DEAR], PLANNED, {}, b)
    assert b.summary(5)["partial_rounds"] == 1
