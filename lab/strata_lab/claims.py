"""Claims and their verdicts.

A claim quotes its source (paper, section or figure, the sentence) or is
marked "ours", names the quantity it is about, and states a criterion on it:

  - Below(t): the quantity is below t (e.g. "gains at most 15%": ratio <= 1.15);
  - Above(t): the quantity is above t (e.g. "slows down": ratio > 1);
  - Within(lo, hi): an equivalence claim ("within 10%", "unaffected"): the
    quantity lies inside the margin [lo, hi], stated next to the paper's figure.

Each estimate carries a 95% interval (intervals.py). Four verdicts:
  - held: the interval lies on the claim's side (inside the margin, for Within);
  - not held: it lies on the other side (wholly outside the margin);
  - inconclusive: otherwise (the interval straddles the threshold);
  - not measured: no data; the row is always shown.

A claim "for every program" has one estimate per program, each at the
Bonferroni-corrected level (stats.corrected); it is held when every program
holds, not held when some program does not (the row names them), and
inconclusive otherwise. The correction guards "not held" (one program of k
wrongly breaking it: k chances). "Held" needs every program to hold, so it is
wrong only if some program that truly misses has its interval on the held
side: that one program's chance, whatever k (an intersection-union test,
Berger 1982). So where a claim also carries hold_estimates (the same
quantity at the uncorrected 95%), a program holds when its 95% interval lies
on the claim's side; it breaks the claim only when its corrected interval
lies on the other. Not for "six of the eight" claims (there a wrong "held"
may come from any of several programs): those use the corrected intervals
on both sides. A claim "for six of the eight" (at_least = 0.75) is
held when that many programs hold, not held when too many do not. Verdicts come only from these estimates: nothing is
read from a file.

A paper's figure becomes a threshold by one rule, within 2× of the figure (as the stand-ins' calibration is):
an effect the paper measured ("slows down by 18%", "39% fewer misses") is held when at least half of it is
measured (effect(0.18) = 1.09, effect(-0.39) = 0.805); a bound ("only 2.3%") when at most twice it is, and no
more than 10 points over it (bound(0.023) = 1.046, bound(0.24) = 1.34). A factor (31× less) is held at half
the factor."""
import math
from dataclasses import dataclass, field
from typing import Optional

from . import intervals

HELD, NOT_HELD, INCONCLUSIVE, NOT_MEASURED = "held", "not held", "inconclusive", "not measured"
VERDICTS = (HELD, NOT_HELD, INCONCLUSIVE, NOT_MEASURED)


def effect(change: float) -> float:
    """The ratio that shows at least half of a relative change the paper measured (+0.18 -> 1.09, -0.39 -> 0.805)."""
    return 1 + change / 2


def bound(change: float) -> float:
    """The ratio allowed by a bound the paper measured ("only 2.3%"): twice it, at most 10 points over it."""
    return 1 + min(2 * change, change + 0.10)


@dataclass(frozen=True)
class Source:
    """Where a claim comes from: a paper's section or figure and its sentence,
    or ours (`paper` = "ours", with the reason in `quote`)."""
    paper: str          # "2026", "2002", "2002 slides", "Vam 2005", "2001", "ours"
    where: str          # "§4.3", "Fig. 8" ...
    quote: str          # the sentence, verbatim

    @property
    def ours(self) -> bool:
        return self.paper == "ours"

    def text(self) -> str:
        if self.ours:
            return f"ours: {self.quote}"
        return f"{self.paper} {self.where}: “{self.quote}”"


@dataclass(frozen=True)
class Below:
    threshold: float
    strict: bool = False

    def side(self, e: intervals.Estimate) -> str:
        if e.high < self.threshold or (not self.strict and e.high == self.threshold):
            return HELD
        if e.low > self.threshold or (self.strict and e.low == self.threshold):
            return NOT_HELD
        return INCONCLUSIVE

    def text(self) -> str:
        return f"{'<' if self.strict else '≤'} {self.threshold:g}"


@dataclass(frozen=True)
class Above:
    threshold: float

    def side(self, e: intervals.Estimate) -> str:
        if e.low > self.threshold:
            return HELD
        if e.high <= self.threshold:
            return NOT_HELD
        return INCONCLUSIVE

    def text(self) -> str:
        return f"> {self.threshold:g}"


@dataclass(frozen=True)
class Within:
    low: float
    high: float

    def side(self, e: intervals.Estimate) -> str:
        if self.low <= e.low and e.high <= self.high:
            return HELD
        if e.high < self.low or e.low > self.high:
            return NOT_HELD
        return INCONCLUSIVE

    def text(self) -> str:
        return f"within [{self.low:g}, {self.high:g}]"


@dataclass
class Claim:
    key: str                 # stable identifier, e.g. "regions.gap-best"
    section: str             # the report section's title
    statement: str           # what is claimed, in our words
    source: Source
    quantity: str            # what is estimated, e.g. "naive/custom time on mimalloc at Adv0"
    criterion: object        # Below | Above | Within
    paper_figure: str = ""   # the paper's own figure for it ("2.3%", "up to 15%")
    # The paper's figure as a number in the quantity's own units ("2.3% gain" on a naive/custom ratio: 1.023),
    # where the paper gives one; the report plots it against ours. None: no single number.
    paper_value: Optional[float] = None
    estimates: dict = field(default_factory=dict)   # label -> Estimate or None (one per program if `every`)
    every: bool = False      # a "for every program" claim, judged per program
    at_least: Optional[float] = None  # "for six of the eight": the fraction of programs that must hold
    exceptions: str = ""     # the paper's own exceptions
    note: str = ""           # context beside the verdict (e.g. the workloads' allocation rates)
    # One line: why the measurement departs from the paper when it does (the cause, not the list of
    # programs that break it); shown beside a "not held" or "inconclusive" verdict.
    why: str = ""
    cells: set = field(default_factory=set)         # cells whose rounds decide it (adaptive rounds)
    # label -> the estimate at the uncorrected 95% (an "every" claim's held side: intersection-union, above)
    hold_estimates: dict = field(default_factory=dict)
    # filled by judge():
    verdict: str = NOT_MEASURED
    breakers: list = field(default_factory=list)    # programs on the other side
    undecided: list = field(default_factory=list)   # programs whose interval straddles

    def judge(self) -> "Claim":
        measured = {k: e for k, e in self.estimates.items() if e is not None}
        missing = [k for k, e in self.estimates.items() if e is None]
        if not measured:
            self.verdict = NOT_MEASURED
            return self
        sides = {k: self.side_of(k) for k in measured}
        self.breakers = [k for k, s in sides.items() if s == NOT_HELD]
        self.undecided = [k for k, s in sides.items() if s == INCONCLUSIVE] + missing
        if self.at_least is not None:
            needed = math.ceil(self.at_least * len(self.estimates))
            held = len(self.estimates) - len(self.breakers) - len(self.undecided)
            self.verdict = HELD if held >= needed else \
                NOT_HELD if len(self.breakers) > len(self.estimates) - needed else INCONCLUSIVE
            return self
        if self.breakers:
            self.verdict = NOT_HELD
        elif self.undecided:
            self.verdict = INCONCLUSIVE
        else:
            self.verdict = HELD
        return self

    def hold_estimate(self, label: str) -> Optional[intervals.Estimate]:
        """The estimate that decides whether `label` holds: its 95% one for an "every" claim judged by
        intersection-union (not "six of the eight"), else the one shown."""
        if self.at_least is None and self.hold_estimates.get(label) is not None:
            return self.hold_estimates[label]
        return self.estimates.get(label)

    def side_of(self, label: str) -> str:
        """A program's side: not held by its (corrected) estimate, held by its hold_estimate, else inconclusive."""
        side = self.criterion.side(self.estimates[label])
        if side == INCONCLUSIVE and self.criterion.side(self.hold_estimate(label)) == HELD:
            return HELD
        return side

    def interval_text(self) -> str:
        if not self.estimates:
            return "no data"
        if len(self.estimates) == 1:
            e = next(iter(self.estimates.values()))
            return "no data" if e is None else e.text()
        return "; ".join(f"{k} {'no data' if e is None else e.text()}{self._hold_text(k)}"
                         for k, e in self.estimates.items())

    def _hold_text(self, label: str) -> str:
        """The 95% interval that judged a program held when the corrected one shown would not have."""
        e, hold = self.estimates.get(label), self.hold_estimate(label)
        if e is None or hold is None or hold is e or self.criterion.side(e) != INCONCLUSIVE \
                or self.criterion.side(hold) != HELD:
            return ""
        return f", held at 95% (intersection-union): [{hold.low:.3f}, {hold.high:.3f}]"

    def outcome_text(self) -> str:
        parts = []
        if self.breakers:
            parts.append("breaks it: " + ", ".join(self.breakers))
        if self.undecided and self.verdict != NOT_MEASURED:
            parts.append("undecided: " + ", ".join(self.undecided))
        if self.exceptions:
            parts.append("paper's exceptions: " + self.exceptions)
        return "; ".join(parts)


def tally(claims: list) -> dict:
    counts = {v: 0 for v in VERDICTS}
    for c in claims:
        counts[c.verdict] += 1
    return counts
