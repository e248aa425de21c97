"""Adaptive rounds (evaluation/adaptive.py): which cells the next extra round
takes, and the partial round when a whole one would overrun the budget."""
import math
import time
from dataclasses import dataclass, field

from strata_lab import intervals
from strata_lab.claims import INCONCLUSIVE, Below, Claim, Source
from strata_lab.evaluation import adaptive
from strata_lab.evaluation.plan import Cell


@dataclass
class FakeClaim:
    """An undecided claim without intervals: nothing to project, so rounds take every undecided claim's cells."""
    key: str
    verdict: str
    cells: set = field(default_factory=set)
    estimates: dict = field(default_factory=dict)
    undecided: list = field(default_factory=list)
    at_least: None = None


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


# Focused rounds: the claims projected to decide within max_rounds, cheapest to decide first.

def claim_of(key: str, cells: set, estimates: dict, hold: dict = None) -> Claim:
    c = Claim(key, "s", "st", Source("ours", "", "q"), "q", Below(1.10), estimates=dict(estimates), cells=set(cells),
              hold_estimates=dict(hold or {}))
    return c.judge()


def ratio(value: float, low: float, high: float, n: int = 6) -> intervals.Estimate:
    return intervals.Estimate(value, low, high, n, "bootstrap")


NEAR = claim_of("near", {A1.key, A2.key}, {"a": ratio(1.00, 0.95, 1.12)})        # needs about 6*(0.113/0.095)^2 = 8.5
ON = claim_of("on", {B1.key, B2.key}, {"b": ratio(1.10, 1.00, 1.20)})            # on the threshold: never decides


def test_a_claim_on_its_threshold_gives_way_to_one_near_deciding():
    assert NEAR.verdict == ON.verdict == INCONCLUSIVE
    assert adaptive.rounds_to_decide(ON) == math.inf
    assert 8 < adaptive.rounds_to_decide(NEAR) < 9
    b = budget_with(100.0, DURATIONS)
    assert adaptive.next_round([ON, NEAR], PLANNED, {}, b) == [A1, A2]
    assert b.focused_rounds == 1 and b.partial_rounds == 0


def test_focused_rounds_take_the_cheapest_decisions_the_budget_carries():
    far = claim_of("far", {B1.key, B2.key}, {"b": ratio(1.00, 0.93, 1.13)})    # about 11 rounds, 20 s each
    b = budget_with(60.0, DURATIONS)      # near: 3 more rounds x 2 s; far: 5 x 20 s = 100 s, beyond the budget
    assert adaptive.next_round([far, NEAR], PLANNED, {}, b) == [A1, A2]
    b = budget_with(150.0, DURATIONS)
    assert set(adaptive.next_round([far, NEAR], PLANNED, {}, b)) == {A1, A2, B1, B2}


def test_the_held_side_is_projected_from_the_95_percent_interval():
    """An "every" claim: a program holds by its 95% interval (intersection-union), so its rounds to decide come
    from that one, not from the wider corrected one."""
    wide = {"a": ratio(1.00, 0.90, 1.25), "c": ratio(1.00, 0.95, 1.05)}
    narrow = {"a": ratio(1.00, 0.95, 1.12), "c": ratio(1.00, 0.97, 1.03)}
    c = claim_of("every", {A1.key, A2.key}, wide, narrow)
    assert c.undecided == ["a"]
    assert adaptive.rounds_to_decide(c) < adaptive.rounds_to_decide(claim_of("corrected only", set(), wide))


def test_a_program_projected_to_break_decides_the_claim_alone():
    c = claim_of("breaks", {A1.key, A2.key}, {"a": ratio(1.30, 1.05, 1.60), "c": ratio(1.00, 0.80, 1.40)})
    assert c.verdict == INCONCLUSIVE
    assert adaptive.rounds_to_decide(c) == adaptive._needed(c.estimates["a"], c.estimates["a"], c.criterion)


def test_counts_and_fractions_are_projected_on_a_linear_scale():
    """No logarithm of a zero: a fraction whose interval starts at 0 (a detection rate) and a claim "below 0"
    (a count of misses) project on the linear scale (make lab stopped on these with a math domain error)."""
    fraction = Claim("fraction", "s", "st", Source("ours", "", "q"), "q", Below(0.067),
                     estimates={"x": intervals.Estimate(0.05, 0.0, 0.3, 5, "bootstrap")}, cells={A1.key}).judge()
    assert fraction.verdict == INCONCLUSIVE
    assert 5 < adaptive.rounds_to_decide(fraction) < math.inf
    count = Claim("count", "s", "st", Source("ours", "", "q"), "q", Below(0),
                  estimates={"x": intervals.Estimate(-0.5, -1.0, 0.5, 5, "bootstrap")}, cells={A1.key}).judge()
    assert count.verdict == INCONCLUSIVE
    assert 5 < adaptive.rounds_to_decide(count) < math.inf
    b = budget_with(100.0, DURATIONS)
    assert adaptive.next_round([fraction, count], PLANNED, {}, b) == [A1]
