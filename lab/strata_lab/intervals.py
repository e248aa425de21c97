"""Intervals for the lab's verdicts: every quantity a claim is about is
estimated with a 95% confidence interval, from SciPy's bootstrap.

The unit of replication is the round: each round runs every cell once, in a
shuffled order, so a ratio between two cells is taken within one round (both
runs saw the same machine load) and rounds are independent samples. A ratio
is summarised by its geometric mean (the mean of log ratios), the measure of
a typical factor that a single slow round cannot dominate the way it
dominates an arithmetic mean.

Methods, each named in the report beside its interval:
  - "bootstrap": scipy.stats.bootstrap (BCa; percentile when BCa cannot be
    computed, e.g. a jackknife of identical values) of the mean log ratio,
    resampling rounds;
  - "bootstrap over workloads' rounds": for a statistic over several
    workloads (a geometric mean, a maximum), each workload's rounds are
    resampled independently (SciPy's multi-sample bootstrap), so the interval
    carries the noise of every workload the claim spans;
  - "exact": a deterministic measurement (callgrind, cachegrind, strata-drag)
    has no sampling noise; its interval is the value itself.

Resampling uses a fixed seed, so re-rendering a report gives the same
intervals. With 5 rounds a bootstrap interval is narrower than its nominal
level (the known small-sample undercoverage of the bootstrap); the
evaluation therefore adds rounds to the cells of undecided claims
(evaluation/adaptive.py) rather than trusting a verdict from few rounds."""
import math
import statistics
import warnings
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
from scipy import stats as scipy_stats

CONFIDENCE = 0.95
RESAMPLES = 2000
MIN_PAIRS = 3  # fewer paired rounds than this: no interval (the claim is inconclusive)


@dataclass(frozen=True)
class Estimate:
    """A quantity with its confidence interval [low, high] at `confidence`."""
    value: float
    low: float
    high: float
    n: int              # rounds (per workload, the smallest count) or values behind it
    method: str
    confidence: float = CONFIDENCE

    def text(self, digits: int = 3) -> str:
        if self.low == self.high == self.value:
            return f"{self.value:.{digits}f} ({self.method}{'' if self.method == 'exact' else f', n={self.n}'})"
        return (f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}] "
                f"({self.confidence:.1%} CI, {self.method}, n={self.n})")


def exact(value: float, n: int = 1) -> Estimate:
    return Estimate(value, value, value, n, "exact")


def _bootstrap(samples: tuple, statistic: Callable, confidence: float):
    """(low, high) of SciPy's bootstrap; BCa, else percentile."""
    rng = np.random.default_rng(20260601)
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # BCa's degenerate-jackknife warning: we fall back
            result = scipy_stats.bootstrap(samples, statistic, vectorized=True, paired=False, axis=-1,
                                           confidence_level=confidence, n_resamples=RESAMPLES,
                                           method=method, random_state=rng)
        low, high = result.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            return float(low), float(high)
    return None


def _log(values: Sequence[float]) -> Optional[np.ndarray]:
    values = [v for v in values if v is not None and v > 0]
    return np.log(np.asarray(values, dtype=float)) if values else None


def ratio(ratios: Sequence[float], confidence: float = CONFIDENCE) -> Optional[Estimate]:
    """The geometric mean of paired ratios with its bootstrap interval; None
    with fewer than MIN_PAIRS ratios."""
    logs = _log(ratios)
    if logs is None or len(logs) < MIN_PAIRS:
        return None
    value = math.exp(float(np.mean(logs)))
    if np.ptp(logs) == 0:
        return Estimate(value, value, value, len(logs), "the same in every round", confidence)
    bounds = _bootstrap((logs,), lambda x, axis=-1: np.mean(x, axis=axis), confidence)
    if bounds is None:
        return None
    return Estimate(value, math.exp(bounds[0]), math.exp(bounds[1]), len(logs), "bootstrap", confidence)


def _across(groups: list, reduce: Callable, name: str, confidence: float) -> Optional[Estimate]:
    logs = [_log(g) for g in groups]
    if not logs or any(x is None or len(x) < MIN_PAIRS for x in logs):
        return None
    means = [float(np.mean(x)) for x in logs]
    value = math.exp(reduce(np.asarray(means), axis=0))
    if all(np.ptp(x) == 0 for x in logs):
        return Estimate(value, value, value, min(map(len, logs)), "the same in every round", confidence)

    def statistic(*samples, axis=-1):
        return reduce(np.stack([np.mean(s, axis=axis) for s in samples]), axis=0)

    bounds = _bootstrap(tuple(logs), statistic, confidence)
    if bounds is None:
        return None
    return Estimate(value, math.exp(bounds[0]), math.exp(bounds[1]), min(map(len, logs)), name, confidence)


def geometric_mean_across(groups: list, confidence: float = CONFIDENCE) -> Optional[Estimate]:
    """The geometric mean over workloads of each workload's geometric-mean
    ratio; groups = one list of paired ratios per workload."""
    return _across(groups, np.mean, "bootstrap over workloads' rounds", confidence)


def maximum_across(groups: list, confidence: float = CONFIDENCE) -> Optional[Estimate]:
    """The largest of the workloads' geometric-mean ratios (e.g. "at most 15%
    in every program" read as a bound on the worst one)."""
    return _across(groups, np.max, "bootstrap over workloads' rounds", confidence)


def geometric_mean_exact(values: Sequence[float]) -> Optional[Estimate]:
    """The geometric mean of deterministic per-workload figures."""
    values = [v for v in values if v is not None and v > 0]
    return exact(statistics.geometric_mean(values), len(values)) if values else None


def correlation(xs: Sequence[float], ys: Sequence[float], confidence: float = CONFIDENCE) -> Optional[Estimate]:
    """Pearson's r with its interval (Fisher's z, scipy.stats.pearsonr)."""
    if len(xs) < 4 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    result = scipy_stats.pearsonr(xs, ys)
    ci = result.confidence_interval(confidence)
    return Estimate(float(result.statistic), float(ci.low), float(ci.high), len(xs), "Fisher z", confidence)


def corrected(confidence: float, comparisons: int) -> float:
    """Bonferroni: each of k intervals at 1 - (1 - confidence) / k, so that all
    k hold together with probability at least `confidence`."""
    return 1 - (1 - confidence) / max(1, comparisons)
