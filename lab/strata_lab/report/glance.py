"""The report's first screen: what strata is and what was run, a scorecard
per paper (its full citation and its verdicts' counts), and the few findings
that matter most, each chosen by a rule from the judged claims and the cells,
never written by hand:

  - the strongest confirmations: a paper's held claims whose weakest interval
    lies farthest inside the claim's side (those with a paper figure to set
    ours against first; one per paper before a second from any);
  - the largest departures: a paper's not-held claims whose interval lies
    farthest outside, ranked the same way, with their cause (Claim.why)
    where a helper wrote it;
  - what strata recommends: the allocator fastest on the most programs on a
    clean heap, and the largest gain of a program's own allocator (custom or
    reap) over malloc/free, with the allocator it was measured on."""
import math
import statistics

from ..claims import HELD, NOT_HELD, VERDICTS, tally
from . import claimview
from .results import Results, Section

WHAT = ("strata is a set of C/C++ memory allocators (header-only heap layers, reaps, libstrata: a drop-in malloc, and "
        "its hardened build). This report tests the claims of four papers on allocation, and some of strata's own, "
        "on this machine.")
CONFIRMATIONS, DEPARTURES = 2, 2


def section(r: Results, claims: list) -> Section:
    s = Section("glance", "At a glance")
    s.p(WHAT)
    s.p(run_text(r))
    s.table(["paper"] + list(VERDICTS), scorecard(claims))
    s.bullets(findings(r, claims))
    return s


def run_text(r: Results) -> str:
    meta = r.meta
    experiments = meta.get("experiments", [])
    programs = sorted({w for e in experiments for w in e["workloads"]})
    allocators = sorted({a for e in experiments for a in e["allocators"]})
    presets = sorted({p for e in experiments for p in e["presets"]})
    rounds = max((int(x["round"]) for x in r.runs if x.get("round") not in (None, "")), default=0)
    took = meta.get("duration_seconds")
    took = "?" if took is None else f"{float(took) / 60:.0f} min" if float(took) >= 600 else f"{float(took):.0f} s"
    partial = " **Partial: the evaluation was interrupted.**" if meta.get("partial") else ""
    return (f"**Run:** {len(programs)} programs ({_few(programs)}), {len(allocators)} allocators ({_few(allocators)}), "
            f"presets {', '.join(presets) or 'none'}; {len(r.runs)} timed runs in up to {rounds} interleaved rounds, "
            f"{took} in all (config {meta.get('config', {}).get('name', '?')}, commit "
            f"{meta.get('git', {}).get('describe', '?')}).{partial}")


def _few(names: list, most: int = 8) -> str:
    return ", ".join(names) if len(names) <= most else ", ".join(names[:most]) + f" and {len(names) - most} more"


def scorecard(claims: list) -> list:
    """One row per paper, in the order the claims come, ours last: the citation, then the count of each verdict."""
    keys = list(dict.fromkeys(claimview.paper_key(c) for c in claims))
    keys = [k for k in keys if k != claimview.OURS] + [k for k in keys if k == claimview.OURS]
    rows = []
    for key in keys:
        counts = tally([c for c in claims if claimview.paper_key(c) == key])
        rows.append([claimview.paper_label(key)] + [str(counts[v]) for v in VERDICTS])
    return rows


def findings(r: Results, claims: list) -> list:
    papers = [c for c in claims if claimview.paper_key(c) != claimview.OURS]
    out = []
    for c in _strongest([c for c in papers if c.verdict == HELD], CONFIRMATIONS):
        out.append(f"**Confirmed** ({claimview.short_paper(claimview.paper_key(c))}): {c.statement}. "
                   f"Ours: {claimview.ours_text(c)}; paper: {c.paper_figure or 'no figure'}.")
    for c in _strongest([c for c in papers if c.verdict == NOT_HELD], DEPARTURES):
        why = f"Why: {c.why}" if c.why else f"Here {claimview.reason(c)} (no cause written yet)"
        out.append(f"**Departs** ({claimview.short_paper(claimview.paper_key(c))}): {c.statement}: not here. "
                   f"Ours: {claimview.ours_text(c)}; paper: {c.paper_figure or 'no figure'}. {why}.")
    recommendation = recommend(r)
    if recommendation:
        out.append(recommendation)
    return out


def _strongest(claims: list, n: int) -> list:
    """The n claims farthest from their threshold, at most one per paper while other papers have one."""
    ranked = sorted(claims, key=lambda c: (c.paper_value is not None, claimview.strength(c)), reverse=True)
    chosen, seen = [], set()
    for c in ranked:
        if claimview.paper_key(c) not in seen:
            chosen.append(c)
            seen.add(claimview.paper_key(c))
    chosen += [c for c in ranked if c not in chosen]
    return chosen[:n]


def recommend(r: Results) -> str:
    parts = [x for x in (_fastest_allocator(r), _largest_own_gain(r)) if x]
    return "**strata recommends:** " + "; ".join(parts) + "." if parts else ""


def _clean_cells(r: Results) -> dict:
    """(workload, mode, scale) -> {allocator: median time} on a clean heap (Adv0)."""
    out = {}
    for (w, mode, scale, alloc, preset), cell in r.cells.items():
        if preset == "Adv0" and cell.time is not None and cell.time.median > 0:
            out.setdefault((w, mode, scale), {})[alloc] = cell.time.median
    return out


def _fastest_allocator(r: Results) -> str:
    """The allocator fastest in the most comparisons (a program in one mode at one scale, two allocators or more)."""
    wins, ratios, compared = {}, {}, 0
    for times in _clean_cells(r).values():
        if len(times) < 2:
            continue
        compared += 1
        best = min(times, key=times.get)
        if sum(t == times[best] for t in times.values()) > 1:
            continue   # a tie: no allocator wins this one
        wins[best] = wins.get(best, 0) + 1
        if "glibc" in times and best != "glibc":
            ratios.setdefault(best, []).append(times[best] / times["glibc"])
    if not wins:
        return ""
    best = max(wins, key=lambda a: (wins[a], a))
    text = f"{best} as malloc, fastest in {wins[best]} of {compared} program comparisons on a clean heap"
    if ratios.get(best):
        gm = math.exp(statistics.fmean(math.log(x) for x in ratios[best]))
        text += f" ({(1 - gm) * 100:.0f}% less time than glibc there, geometric mean)"
    return text


def _largest_own_gain(r: Results) -> str:
    """The program whose own allocator (custom or reap) gains most over malloc/free (naive), on the allocator
    where naive allocation is fastest."""
    cells = _clean_cells(r)
    best = None
    for (w, mode, scale), times in cells.items():
        naive = cells.get((w, "naive", scale))
        if mode not in ("custom", "reap") or not naive:
            continue
        alloc = min(naive, key=naive.get)
        if alloc in times:
            gain = naive[alloc] / times[alloc]
            if best is None or gain > best[0]:
                best = (gain, w, mode, alloc)
    if best is None:
        return ""
    gain, w, mode, alloc = best
    if gain <= 1:
        return f"malloc/free (naive) on {alloc}: no program's own allocator beats it on a clean heap here"
    return f"for programs like {w}, its {mode} allocator gains {(gain - 1) * 100:.0f}% over malloc/free on {alloc}"
