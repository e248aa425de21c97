"""One allocator against another on the same programs: time, peak RSS and the
most pages in use, each as a ratio paired within a round (timed runs for time
and RSS, memory runs for pages). Shared by the sections that compare an
allocator with its counterpart program by program (heap-layers, vam-variants)."""
from typing import Optional

from ... import intervals
from ...claims import Claim
from .. import plots
from ..results import TIME, Results, Section, estimate, summary_of

RSS, PAGES = "peak_rss_bytes", "peak_in_use_bytes"   # TIME: each program's time as timing.py chooses it
METRICS = {TIME: "time", RSS: "peak RSS", PAGES: "most pages in use"}


def ratios(r: Results, e: dict, workload: str, top: str, bottom: str, metric: str) -> list:
    """top/bottom for one workload, one ratio per round (memory runs for pages in use)."""
    key = lambda a: r.key(e, workload, e["modes"][0], a, "Adv0")
    if metric == PAGES:
        return r.memory_ratios(key(top), key(bottom), PAGES)
    return r.ratios(key(top), key(bottom), metric)


def cells(r: Results, e: dict, allocators: tuple) -> set:
    return {r.key(e, w, e["modes"][0], a, "Adv0") for w in e["workloads"] for a in allocators}


def average(r: Results, e: dict, top: str, bottom: str, metric: str, confidence: float = intervals.CONFIDENCE):
    """The geometric mean over the experiment's workloads of top/bottom (None when a workload lacks pairs)."""
    return intervals.geometric_mean_across([ratios(r, e, w, top, bottom, metric) for w in e["workloads"]], confidence)


def per_program(r: Results, e: dict, top: str, bottom: str, metric: str) -> dict:
    """workload -> top/bottom, each at the Bonferroni-corrected level (a claim judged for every program)."""
    confidence = intervals.corrected(intervals.CONFIDENCE, len(e["workloads"]))
    return {w: intervals.ratio(ratios(r, e, w, top, bottom, metric), confidence) for w in e["workloads"]}


def judge_average(r: Results, s: Section, claim: Claim, e: Optional[dict], top: str, bottom: str,
                  metric: str) -> None:
    """claim on the average of top/bottom over the programs; not measured without both allocators."""
    if e is not None and {top, bottom} <= set(e["allocators"]):
        claim.cells.update(cells(r, e, (top, bottom)))
        claim.estimates[f"{top} / {bottom}"] = average(r, e, top, bottom, metric)
    s.claim(claim)


def judge_every(r: Results, s: Section, claim: Claim, e: Optional[dict], top: str, bottom: str,
                metric: str) -> None:
    """claim on top/bottom in every program; not measured without both allocators."""
    if e is not None and {top, bottom} <= set(e["allocators"]):
        claim.cells.update(cells(r, e, (top, bottom)))
        claim.estimates.update(per_program(r, e, top, bottom, metric))
        claim.every = len(e["workloads"]) > 1
    s.claim(claim)


def figures(r: Results, s: Section, e: dict, pairs: list, name: str, title: str) -> None:
    """A table (every pair x program x metric, 95% intervals) and one plot per metric, for
    pairs = [(top, bottom)] whose allocators the experiment ran."""
    pairs = [(a, b) for a, b in pairs if {a, b} <= set(e["allocators"])]
    labels = [f"{a} / {b}" for a, b in pairs]
    rows, values = [], {m: {} for m in METRICS}
    for w in e["workloads"]:
        for (a, b), label in zip(pairs, labels):
            found = {m: intervals.ratio(ratios(r, e, w, a, b, m)) for m in METRICS}
            for m, q in found.items():
                if q is not None:
                    values[m][(w, label)] = summary_of(q)
            rows.append([w, label] + [estimate(found[m]) for m in METRICS])
    for m, what in METRICS.items():
        if values[m]:
            s.img(plots.bars(r.plot_path(f"{name}-{m}"), f"{title}: {what}", f"{what} ratio", e["workloads"],
                             labels, values[m], 1.0), f"{what} ratios (whiskers: 95% interval)")
    s.table(["workload", "pair"] + [f"{what} ratio (95% CI)" for what in METRICS.values()], rows)


def absolute(r: Results, s: Section, e: dict) -> None:
    """Each cell's own figures: median time, peak RSS, most pages in use (Table 5 and 6's layout)."""
    rows = []
    for w in e["workloads"]:
        for a in e["allocators"]:
            key = r.key(e, w, e["modes"][0], a, "Adv0")
            cell = r.cells.get(key)
            if cell is not None:
                pages = r.memory_of(key)
                rows.append([w, a, f"{cell.time.median:.3f} s" if cell.time else "—",
                             f"{cell.rss.median / 2**20:.1f} MiB" if cell.rss else "—",
                             f"{pages.median / 2**20:.1f} MiB" if pages else "—"])
    s.table(["workload", "allocator", "time (median)", "peak RSS (median)", "most pages in use (median)"], rows)
