"""The statistics behind every verdict, against known cases."""
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from strata_lab import intervals


def test_a_constant_ratio_is_its_own_interval():
    e = intervals.ratio([1.25] * 5)
    assert (e.value, e.low, e.high, e.n) == pytest.approx((1.25, 1.25, 1.25, 5))


def test_the_estimate_is_the_geometric_mean_and_the_interval_is_scipys_bootstrap():
    ratios = [0.9, 1.1, 1.3, 1.0, 1.2, 0.95, 1.05]
    e = intervals.ratio(ratios)
    assert e.value == pytest.approx(math.exp(np.mean(np.log(ratios))))
    reference = scipy_stats.bootstrap((np.log(ratios),), np.mean, confidence_level=0.95, n_resamples=intervals.RESAMPLES,
                                      method="BCa", random_state=np.random.default_rng(20260601))
    assert (math.log(e.low), math.log(e.high)) == pytest.approx(tuple(reference.confidence_interval), rel=1e-9)
    assert min(ratios) <= e.low < e.value < e.high <= max(ratios)


def test_too_few_pairs_give_no_interval():
    assert intervals.ratio([1.0, 1.1]) is None
    assert intervals.ratio([]) is None
    assert intervals.ratio([None, 0.0, 1.0, 1.0]) is None  # non-positive and missing ratios are not pairs


def test_the_interval_covers_the_truth_about_as_often_as_it_says():
    """Known case: log ratios drawn from N(0, 0.1); the 95% interval of 20 rounds should cover 1.0 in about 95% of
    200 seeded experiments (BCa at n=20 is slightly narrow: at least 88%)."""
    rng = np.random.default_rng(7)
    covered = sum(1 for _ in range(200)
                  if (e := intervals.ratio(list(np.exp(rng.normal(0.0, 0.1, 20))))).low <= 1.0 <= e.high)
    assert 176 <= covered <= 200, covered


def test_a_wider_confidence_gives_a_wider_interval():
    ratios = [0.9, 1.1, 1.3, 1.0, 1.2, 0.95]
    narrow, wide = intervals.ratio(ratios, 0.90), intervals.ratio(ratios, intervals.corrected(0.95, 8))
    assert wide.low < narrow.low and wide.high > narrow.high


def test_bonferroni():
    assert intervals.corrected(0.95, 1) == pytest.approx(0.95)
    assert intervals.corrected(0.95, 5) == pytest.approx(0.99)


def test_across_workloads_geometric_mean_and_maximum():
    groups = [[1.0, 1.02, 0.98, 1.01], [2.0, 2.02, 1.98, 2.01]]
    g = intervals.geometric_mean_across(groups)
    per = [math.exp(np.mean(np.log(x))) for x in groups]
    assert g.value == pytest.approx(math.sqrt(per[0] * per[1]))
    assert g.low < g.value < g.high
    m = intervals.maximum_across(groups)
    assert m.value == pytest.approx(per[1]) and 1.9 < m.low <= m.value <= m.high < 2.1
    assert intervals.geometric_mean_across([[1.0, 1.0, 1.0], [1.0]]) is None   # one workload without pairs: no estimate


def test_exact_figures_and_their_geometric_mean():
    assert intervals.exact(0.5).text() == "0.500 (exact)"
    g = intervals.geometric_mean_exact([0.5, 2.0, None])
    assert (g.value, g.low, g.high, g.method) == (pytest.approx(1.0), pytest.approx(1.0), pytest.approx(1.0), "exact")


def test_correlation_with_its_fisher_interval():
    xs = [1, 2, 3, 4, 5, 6]
    rising = intervals.correlation(xs, [2, 4, 5, 8, 10, 12])
    assert rising.value > 0.95 and rising.low > 0
    assert intervals.correlation(xs[:3], [1, 2, 3]) is None   # too few points
    none = intervals.correlation(xs, [1, 5, 1, 5, 1, 5])
    assert none.low < 0 < none.high
