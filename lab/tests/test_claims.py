"""Verdicts from intervals: each criterion, each side, and claims about every program."""
import pytest

from strata_lab.claims import (Above, Below, Claim, HELD, INCONCLUSIVE, NOT_HELD, NOT_MEASURED, Source, Within,
                               tally)
from strata_lab.intervals import Estimate


def e(low, high):
    return Estimate((low + high) / 2, low, high, 6, "bootstrap")


@pytest.mark.parametrize("criterion,interval,verdict", [
    (Below(1.1), (0.9, 1.05), HELD), (Below(1.1), (1.12, 1.3), NOT_HELD), (Below(1.1), (1.0, 1.2), INCONCLUSIVE),
    (Below(1.0, strict=True), (0.9, 1.0), INCONCLUSIVE), (Below(1.0), (0.9, 1.0), HELD),
    (Above(1.0), (1.01, 1.3), HELD), (Above(1.0), (0.8, 1.0), NOT_HELD), (Above(1.0), (0.9, 1.1), INCONCLUSIVE),
    (Within(0.95, 1.05), (0.97, 1.04), HELD), (Within(0.95, 1.05), (1.06, 1.2), NOT_HELD),
    (Within(0.95, 1.05), (0.8, 0.94), NOT_HELD), (Within(0.95, 1.05), (0.99, 1.08), INCONCLUSIVE),
    (Within(0.95, 1.05), (0.9, 1.1), INCONCLUSIVE),   # an equivalence claim wants the whole interval in the margin
])
def test_each_criterion_on_each_side(criterion, interval, verdict):
    claim = Claim("k", "s", "statement", Source("2026", "§4", "quote"), "q", criterion, estimates={"w": e(*interval)})
    assert claim.judge().verdict == verdict


def every(*intervals, at_least=None):
    return Claim("k", "s", "st", Source("ours", "", "why"), "q", Below(1.1), every=True, at_least=at_least,
                 estimates={f"w{i}": None if x is None else e(*x) for i, x in enumerate(intervals)}).judge()


def test_a_claim_about_every_program_needs_every_program():
    assert every((0.9, 1.0), (1.0, 1.05)).verdict == HELD
    held_but_one = every((0.9, 1.0), (1.2, 1.3), (1.0, 1.2))
    assert held_but_one.verdict == NOT_HELD and held_but_one.breakers == ["w1"] and held_but_one.undecided == ["w2"]
    assert every((0.9, 1.0), (1.0, 1.2)).verdict == INCONCLUSIVE
    missing = every((0.9, 1.0), None)
    assert missing.verdict == INCONCLUSIVE and missing.undecided == ["w1"]


def test_six_of_eight():
    ok = [(0.9, 1.0)] * 6
    assert every(*ok, (1.2, 1.3), (1.2, 1.3), at_least=0.75).verdict == HELD
    assert every(*ok[:5], (1.2, 1.3), (1.2, 1.3), (1.2, 1.3), at_least=0.75).verdict == NOT_HELD
    assert every(*ok[:5], (1.0, 1.2), (1.2, 1.3), (1.2, 1.3), at_least=0.75).verdict == INCONCLUSIVE


def test_no_data_is_not_measured_and_counted():
    claims = [every(), every((0.9, 1.0)), every((1.2, 1.3))]
    assert claims[0].verdict == NOT_MEASURED and claims[0].interval_text() == "no data"
    assert tally(claims) == {HELD: 1, NOT_HELD: 1, INCONCLUSIVE: 0, NOT_MEASURED: 1}


def test_sources_quote_or_say_ours():
    assert Source("2002", "Fig. 8", "Reap performs within 10%").text() == "2002 Fig. 8: “Reap performs within 10%”"
    assert Source("ours", "", "a mix the paper leaves out").text() == "ours: a mix the paper leaves out"
