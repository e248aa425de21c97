"""A results folder as the report reads it (meta.json, runs.csv, memory.csv,
profiles.csv, bench.csv, valgrind.csv), the blocks a section is made of, and
the formatting every section shares."""
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .. import claims as claims_module
from .. import intervals
from ..measurements import Summary, by_round, cells, judge, paired_ratios, read_csv, references, summarize
from .timing import TIME, Timing

MIB = 2 ** 20


class Results:
    def __init__(self, folder: Path, draw: bool = True):
        self.folder = Path(folder)
        self.draw = draw  # False: judge the claims without drawing a plot (adaptive rounds, tests)
        self.meta = json.loads((self.folder / "meta.json").read_text())
        self.profiles = read_csv(self.folder / "profiles.csv")
        self.runs = read_csv(self.folder / "runs.csv")
        self.memory = read_csv(self.folder / "memory.csv")
        self.bench = read_csv(self.folder / "bench.csv")
        self.valgrind = read_csv(self.folder / "valgrind.csv")
        self.refs = references(self.runs + self.memory, self.profiles, self.meta.get("workloads", {}))
        judge(self.runs, self.refs)
        judge(self.memory, self.refs)
        self.timing = Timing(self.runs)
        # Each cell's time is its program's time as timing.py chooses it, like the ratios: tables, best allocators
        # and fastest cells agree with the claims.
        self.cells = cells(self.runs, self.timing.metric)
        self.memory_cells = cells(self.memory)
        self.plots = self.folder / "plots"

    def experiments(self, section: str) -> list:
        return [e for e in self.meta.get("experiments", []) if e["section"] == section]

    def experiment_with(self, section: str, workload: str) -> Optional[dict]:
        """The first experiment of a section that runs that workload, or None."""
        return next((e for e in self.experiments(section) if workload in e["workloads"]), None)

    def key(self, experiment: dict, workload: str, mode: str, allocator: str, preset: str) -> tuple:
        return (workload, mode, experiment["scales"][workload], allocator, preset)

    def ratios(self, numerator: tuple, denominator: tuple, metric: str = TIME) -> list:
        """numerator/denominator, one per round in which both have a good run; TIME: the program's time (timing.py)
        of the numerator's workload (a pair is two cells of one program)."""
        return paired_ratios(self.runs, numerator, denominator,
                             self.timing.metric(numerator[0]) if metric == TIME else metric)

    def ratio_of_ratios(self, first: tuple, second: tuple) -> list:
        """(a/b)/(c/d) of the programs' times for first = (a, b), second = (c, d), per round in which all four have
        a good run."""
        a, b, c, d = (by_round(self.runs, k, self.timing.metric(k[0])) for k in (*first, *second))
        return [(a[n] / b[n]) / (c[n] / d[n]) for n in sorted(a) if n in b and n in c and n in d and b[n] and c[n]]

    def memory_ratios(self, numerator: tuple, denominator: tuple, metric: str = "fragmentation") -> list:
        """A memory figure's ratio between two cells' memory runs of the same round."""
        return paired_ratios(self.memory, numerator, denominator, metric)

    def memory_of(self, key: tuple) -> Optional[Summary]:
        """Peak memory in use (pages, Vam §4.4) of a cell's memory runs."""
        cell = self.memory_cells.get(key)
        return None if cell is None else cell.heap

    def fragmentation_of(self, key: tuple) -> Optional[Summary]:
        cell = self.memory_cells.get(key)
        return None if cell is None else cell.frag

    def plot_path(self, name: str) -> Optional[Path]:
        """Where a plot goes; None when this Results does not draw (the plot functions then do nothing)."""
        if not self.draw:
            return None
        self.plots.mkdir(exist_ok=True)
        return self.plots / (re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".png")


def best_allocator(r: Results, workload: str, mode: str, scale: int, among: list, preset: str = "Adv0"):
    """The allocator with the lowest median time for that workload, mode and preset."""
    best = None
    for allocator in among:
        cell = r.cells.get((workload, mode, scale, allocator, preset))
        if cell is not None and cell.time is not None and (best is None or cell.time.median < best[1]):
            best = (allocator, cell.time.median)
    return best[0] if best else None


# ---------------------------------------------------------------------------
# Blocks: what a section is made of, rendered both as Markdown and HTML.

@dataclass
class Section:
    key: str
    title: str
    # ("p", text) | ("table", header, rows) | ("img", file, caption) | ("list", items)
    # | ("claims", claims, filters): the compact claims table (render.py), filters: sortable and filtered in HTML
    blocks: list = field(default_factory=list)
    claims: list = field(default_factory=list)

    def p(self, text: str) -> None:
        self.blocks.append(("p", text))

    def table(self, header: list, rows: list) -> None:
        if rows:
            self.blocks.append(("table", header, rows))

    def img(self, path: Optional[Path], caption: str) -> None:
        if path is not None:
            self.blocks.append(("img", path, caption))

    def bullets(self, items: list) -> None:
        if items:
            self.blocks.append(("list", items))

    def claims_table(self, claims: list, filters: bool = False) -> None:
        if claims:
            self.blocks.append(("claims", claims, filters))

    def claim(self, claim: claims_module.Claim) -> claims_module.Claim:
        claim.section = self.title
        self.claims.append(claim.judge())
        return claim


def against_glibc(r: Results, e: dict) -> tuple:
    """Each (workload, allocator) cell of a one-mode experiment at Adv0 against glibc's, paired:
    (values for plots.bars, table rows: workload, allocator, time, ratio, peak RSS, pages in use, fragmentation)."""
    mode = e["modes"][0]
    values, rows = {}, []
    for w in e["workloads"]:
        base = r.key(e, w, mode, "glibc", "Adv0")
        for alloc in e["allocators"]:
            key = r.key(e, w, mode, alloc, "Adv0")
            cell = r.cells.get(key)
            if cell is None:
                continue
            q = intervals.ratio(r.ratios(key, base))
            if q is not None:
                values[(w, alloc)] = summary_of(q)
            rows.append([w, alloc, seconds(cell.time), estimate(q), mib(cell.rss), mib(r.memory_of(key)),
                         frag_text(r.fragmentation_of(key))])
    return values, rows


def ratio_claim_estimates(r: Results, claim: claims_module.Claim, pairs: dict, every: bool = True,
                          metric: str = TIME) -> None:
    """claim.estimates[label] from pairs[label] = (numerator key, denominator key), paired on metric:
    one interval per label, Bonferroni-corrected when the claim is judged per program; and then the 95% one too
    (claim.hold_estimates: a program holds by it, claims.py's intersection-union)."""
    confidence = intervals.corrected(intervals.CONFIDENCE, len(pairs)) if every else intervals.CONFIDENCE
    for label, (top, bottom) in pairs.items():
        claim.cells.update({top, bottom})
        ratios = r.ratios(top, bottom, metric)
        claim.estimates[label] = intervals.ratio(ratios, confidence)
        if every and len(pairs) > 1:
            claim.hold_estimates[label] = intervals.ratio(ratios)
    claim.every = every and len(pairs) > 1


# ---------------------------------------------------------------------------
# Formatting.

def estimate(e: Optional[intervals.Estimate]) -> str:
    return "no pairs" if e is None else e.text()


def seconds(summary: Optional[Summary]) -> str:
    return "—" if summary is None else f"{summary.median:.3f} s ({summary.low:.3f}–{summary.high:.3f})"


def mib(summary: Optional[Summary]) -> str:
    return "—" if summary is None else f"{summary.median / MIB:.1f} MiB ({summary.low / MIB:.1f}–{summary.high / MIB:.1f})"


def frag_text(summary: Optional[Summary]) -> str:
    return "not measured" if summary is None else f"{summary.median:.2f} ({summary.low:.2f}–{summary.high:.2f})"


def series(modes: list, allocators: list) -> list:
    return [(m, a) for m in modes for a in allocators]


def series_name(pair) -> str:
    return f"{pair[0]} / {pair[1]}"


def summary_of(e: Optional[intervals.Estimate]) -> Optional[Summary]:
    """An estimate as the bar plots draw it (whiskers: the interval)."""
    return None if e is None else Summary(e.value, e.low, e.high, e.n)


__all__ = ["MIB", "TIME", "Results", "Section", "Summary", "against_glibc", "best_allocator", "estimate", "frag_text", "mib",
           "ratio_claim_estimates", "seconds", "series", "series_name", "summarize", "summary_of"]
