"""The evaluation report (report.md and a self-contained report.html), from a
results folder's raw files only: meta.json, runs.csv, memory.csv,
profiles.csv, bench.csv, valgrind.csv. `strata-lab report DIR` calls render().

Each section (sections/) mirrors a paper's figure or table and states its
claims (claims.py); every claim is judged from its interval (intervals.py) and
is always shown, measured or not. The answer comes first (glance.py: the run,
a scorecard per paper, the findings), then the claims, then the sections."""
from pathlib import Path

from . import glance, overview, render as renderers, user_program
from .results import Results, Section
from .sections import SECTIONS


def build(r: Results) -> list:
    """Every section, in report order (a section without data still states its claims, as not measured)."""
    sections = [make(r) for make in SECTIONS.values()]
    for claim in (c for section in sections for c in section.claims):
        if r.timing.name in claim.quantity:   # a time claim: say which of its programs paired wall time, and why
            claim.quantity += r.timing.threaded_note(key[0] for key in claim.cells)
    return sections


def claims_of(folder) -> list:
    """The judged claims of a results folder (the evaluation's adaptive rounds ask this between rounds)."""
    r = Results(Path(folder), draw=False)
    return [c for sec in build(r) for c in sec.claims]


def render(folder) -> dict:
    """Writes report.md, report.html and plots/ from the folder's raw results."""
    r = Results(Path(folder))
    for old in r.plots.glob("*.png"):   # a plot an earlier render drew and this one does not is not shown
        old.unlink()
    sections = build(r)
    claims = [c for sec in sections for c in sec.claims]
    # A user's own program answers its questions first; the default report opens with the papers' scorecard.
    first = user_program.screens(r) or [glance.section(r, claims)]
    parts = first + [overview.claims_section(r, sections), overview.fastest_and_leanest(r),
                     overview.setup_section(r)] + sections + [overview.failures_section(r)]
    title = "strata evaluation" + (" — PARTIAL (interrupted)" if r.meta.get("partial") else "")
    md, page = r.folder / "report.md", r.folder / "report.html"
    md.write_text(renderers.to_markdown(title, parts, r.folder))
    allocators = set(r.meta.get("allocators", {})) | {a for e in r.meta.get("experiments", []) for a in e["allocators"]}
    page.write_text(renderers.to_html(title, parts, allocators))
    return {"md": md, "html": page, "sections": [s.key for s in parts]}


__all__ = ["Results", "Section", "build", "claims_of", "render"]
