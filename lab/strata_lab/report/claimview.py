"""How the report shows one claim in a line: the paper it quotes, its one
number (the program that decides it, with its interval and level), a one-line
reason, the allocators it is about, and how far its interval lies from the
claim's threshold (what the findings rank by)."""
import math
from typing import Optional

from ..claims import HELD, INCONCLUSIVE, NOT_HELD, NOT_MEASURED, Above, Below, Claim, Within
from ..papers import PAPERS

OURS = "ours"
REASON_CHARS = 200


def paper_key(c: Claim) -> str:
    """The paper a claim quotes (a talk's slides count as their paper), or "ours"."""
    if c.source.ours:
        return OURS
    return c.source.paper if c.source.paper in PAPERS else c.source.paper.split()[0]


def paper_label(key: str) -> str:
    if key == OURS:
        return "ours (strata's own claims)"
    p = PAPERS.get(key)
    return f"{p.title} ({p.authors}, {p.venue})" if p else key


def short_paper(key: str) -> str:
    p = PAPERS.get(key)
    return f"{p.authors.split(',')[0]} et al., {p.venue}" if p else key


def _log_gap(a: float, b: float) -> float:
    """How far a lies above b: on a log scale for ratios (both positive), else their difference."""
    return math.log(a / b) if a > 0 and b > 0 else a - b


def margin(criterion, e) -> float:
    """Signed distance of an interval from the claim's threshold: positive on the claim's side (by that much at
    its nearest end), negative on the other."""
    if isinstance(criterion, Below):
        return _log_gap(criterion.threshold, e.high)
    if isinstance(criterion, Above):
        return _log_gap(e.low, criterion.threshold)
    if isinstance(criterion, Within):
        return min(_log_gap(e.low, criterion.low), _log_gap(criterion.high, e.high))
    return 0.0


def deciding(c: Claim) -> Optional[tuple]:
    """(label, Estimate) of the program nearest to (or farthest past) the threshold: the one number shown."""
    measured = [(k, e) for k, e in c.estimates.items() if e is not None]
    if not measured:
        return None
    return min(measured, key=lambda x: margin(c.criterion, x[1]))


def strength(c: Claim) -> float:
    """Held: how far the weakest program's interval lies inside; not held: how far the worst lies outside."""
    d = deciding(c)
    return 0.0 if d is None else abs(margin(c.criterion, d[1]))


def level(e) -> str:
    return f"{e.confidence:.1%}".replace(".0%", "%")


def ours_text(c: Claim) -> str:
    """One number with its interval and its level; for a claim over programs, the deciding program's."""
    d = deciding(c)
    if d is None:
        return "not measured"
    label, e = d
    if e.low == e.high == e.value:
        text = f"{e.value:.3g} (exact)"
    else:
        text = f"{e.value:.3g} [{e.low:.3g}, {e.high:.3g}] at {level(e)}"
    if len(c.estimates) > 1:
        text += f"; {label}, the closest of {len(c.estimates)}"
    return text


def reason(c: Claim) -> str:
    """One line: why the verdict (the cause of a departure when a helper wrote it in Claim.why)."""
    if c.verdict == NOT_MEASURED:
        text = "no data in this run" + (f": {c.note}" if c.note else "")
    elif c.verdict in (NOT_HELD, INCONCLUSIVE) and c.why:
        text = c.why
    elif c.verdict == NOT_HELD:
        text = "breaks it: " + ", ".join(c.breakers) if len(c.estimates) > 1 else outside(c.criterion)
    elif c.verdict == INCONCLUSIVE:
        text = f"interval straddles {c.criterion.text()}" + \
            (f" ({', '.join(c.undecided)})" if len(c.estimates) > 1 and c.undecided else "")
    else:
        text = f"{'every interval' if len(c.estimates) > 1 else 'interval'} {c.criterion.text()}"
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 1] + "…"


def outside(criterion) -> str:
    """Where a not-held interval lies, in words."""
    if isinstance(criterion, Below):
        return f"the interval lies above {criterion.threshold:g}, the claim's bound"
    if isinstance(criterion, Above):
        return f"the interval lies at or below {criterion.threshold:g}, the claim's bound"
    return f"the interval lies outside the claim's {criterion.text()}"


def allocators(c: Claim, known: set) -> list:
    """The allocators a claim is about: its cells' and the programs it names that are allocators."""
    found = {key[3] for key in c.cells if len(key) > 3} | {k for k in c.estimates if k in known}
    return sorted(found)


__all__ = ["HELD", "OURS", "allocators", "deciding", "level", "margin", "ours_text", "paper_key", "paper_label",
           "reason", "short_paper", "strength"]
