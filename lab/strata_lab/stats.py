"""Intervals for the lab's verdicts: every quantity a claim is about is
estimated with a 95% confidence interval, from Student's t on log ratios.

The unit of replication is the round: each round runs every cell once, in a
shuffled order, so a ratio between two cells is taken within one round (both
runs saw the same machine load) and rounds are independent samples. A ratio
is summarised by its geometric mean (the mean of log ratios), the measure of
a typical factor that a single slow round cannot dominate the way it
dominates an arithmetic mean.

Methods, each named in the report beside its interval:
  - "t": Student's t interval of the mean log ratio over rounds (SciPy's t
    distribution, n - 1 degrees of freedom);
  - "t over workloads": the geometric mean over several workloads of each
    one's geometric-mean ratio; its standard error adds every workload's,
    with the fewest rounds' degrees of freedom (conservative), so the
    interval carries the noise of every workload the claim spans;
  - "t per workload, Bonferroni": the largest of several workloads' ratios,
    between the largest lower and the largest upper end of the workloads'
    t intervals, each at the Bonferroni-corrected level;
  - "exact": a deterministic measurement (callgrind, cachegrind, strata-drag)
    has no sampling noise; its interval is the value itself.

Why t and not the bootstrap: the evaluation runs 5 rounds a cell, and a
bootstrap interval of the mean of 5 values lies within their range, so it
cannot reach its level: seeded normal log ratios, 5 rounds, covered the
truth 85% of the time at a nominal 95% and 88% at a Bonferroni 99.4% (t:
95% and 99%). The evaluation adds rounds to the cells of undecided claims
(evaluation/adaptive.py), where the budget allows."""
import math
import statistics
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
from scipy import stats as scipy_stats

CONFIDENCE = 0.95
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


def _log(values: Sequence[float]) -> Optional[np.ndarray]:
    values = [v for v in values if v is not None and v > 0]
    return np.log(np.asarray(values, dtype=float)) if values else None


def _t(mean: float, standard_error: float, freedom: float, confidence: float) -> tuple:
    """exp of Student's t interval around a mean log."""
    low, high = scipy_stats.t.interval(confidence, freedom, loc=mean, scale=standard_error)
    return math.exp(low), math.exp(high)


def ratio(ratios: Sequence[float], confidence: float = CONFIDENCE) -> Optional[Estimate]:
    """The geometric mean of paired ratios with its t interval; None with fewer than MIN_PAIRS ratios."""
    logs = _log(ratios)
    if logs is None or len(logs) < MIN_PAIRS:
        return None
    value = math.exp(float(np.mean(logs)))
    if np.ptp(logs) == 0:
        return Estimate(value, value, value, len(logs), "the same in every round", confidence)
    low, high = _t(float(np.mean(logs)), float(scipy_stats.sem(logs)), len(logs) - 1, confidence)
    return Estimate(value, low, high, len(logs), "t", confidence)


def _workload_logs(groups: list) -> Optional[list]:
    logs = [_log(g) for g in groups]
    if not logs or any(x is None or len(x) < MIN_PAIRS for x in logs):
        return None
    return logs


def geometric_mean_across(groups: list, confidence: float = CONFIDENCE) -> Optional[Estimate]:
    """The geometric mean over workloads of each workload's geometric-mean
    ratio; groups = one list of paired ratios per workload."""
    logs = _workload_logs(groups)
    if logs is None:
        return None
    mean, n = float(np.mean([np.mean(x) for x in logs])), min(map(len, logs))
    if all(np.ptp(x) == 0 for x in logs):
        return Estimate(math.exp(mean), math.exp(mean), math.exp(mean), n, "the same in every round", confidence)
    variances = [float(np.var(x, ddof=1)) / len(x) for x in logs]   # each workload's mean's
    # Degrees of freedom: the fewest rounds' (Hsu's conservative choice). Welch-Satterthwaite's estimate from 5
    # rounds a workload covered 91.5% at a nominal 95% (lab/tests/test_stats.py's case).
    low, high = _t(mean, math.sqrt(sum(variances)) / len(logs), n - 1, confidence)
    return Estimate(math.exp(mean), low, high, n, "t over workloads", confidence)


def maximum_across(groups: list, confidence: float = CONFIDENCE) -> Optional[Estimate]:
    """The largest of the workloads' geometric-mean ratios (e.g. "at most 15%
    in every program" read as a bound on the worst one): when every workload's
    interval at the corrected level covers its ratio, the largest ratio lies
    between the largest lower end and the largest upper end."""
    if _workload_logs(groups) is None:
        return None
    each = [ratio(g, corrected(confidence, len(groups))) for g in groups]
    value, low, high = (max(getattr(e, end) for e in each) for end in ("value", "low", "high"))
    method = "the same in every round" if low == high else "t per workload, Bonferroni"
    return Estimate(value, low, high, min(e.n for e in each), method, confidence)


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
