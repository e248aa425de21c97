"""Aggregation (medians, paired ratios, checksum verdicts) and the report
(plots, Markdown, self-contained HTML, both saying the same things) on
synthetic results folders."""
import base64
import csv
import re
from html.parser import HTMLParser

import pytest

from strata_lab import measurements, report
from strata_lab.evaluation import RUN_FIELDS
from synthetic import CHECK, SCALE, Synthetic, run_row, write_csv


@pytest.fixture
def results(tmp_path):
    s = Synthetic()
    s.set("boxed-sim", "naive", "mimalloc", "Adv0", 1.025)
    s.set("freelist16", "naive", "glibc", "Adv0", 1.2)
    s.set_memory("server", "reap", "glibc", 1 << 20)
    # A crash in round 3 (its pair is dropped) and a checksum mismatch in round 4 (never averaged in).
    s.extra_runs = [run_row("freelist16", "naive", "glibc", "Adv0", 7, None, status="crashed"),
                    run_row("freelist16", "naive", "glibc", "Adv0", 8, 0.001, checksum="ffffffffffffffff")]
    s.bench = [{"bench": "zero-cost", "round": rnd, "contender": c, "status": "ok", "seconds": t}
               for rnd in range(1, 7) for c, t in (("kingsley-layers", 1.01), ("kingsley-monolithic", 1.0),
                                                   ("lea-layers", 1.3), ("glibc", 1.0), ("bump", 0.2))]
    return s.write(tmp_path / "results")


# ---------------------------------------------------------------------------
# Aggregation.

def test_medians_with_min_and_max():
    s = measurements.summarize([3.0, 1.0, 100.0, 2.0, None, 4.0])
    assert (s.median, s.low, s.high, s.n) == (3.0, 1.0, 100.0, 5)
    assert measurements.summarize([None, None]) is None


def test_cell_statistics_and_checksum_verdicts(results):
    r = report.Results(results)
    naive = r.cells[("freelist16", "naive", SCALE, "glibc", "Adv0")]
    # rounds 1-6 are good; 7 crashed; 8 had the wrong checksum: neither is averaged in.
    assert (naive.runs, naive.ok) == (8, 6)
    assert naive.failures == {"crashed": 1, "mismatch": 1}
    assert naive.time.median == pytest.approx(1.2, rel=0.01)
    mismatch = [x for x in r.runs if x["verdict"] == "mismatch"]
    assert len(mismatch) == 1 and mismatch[0]["checksum"] == "ffffffffffffffff" and mismatch[0]["reference"] == CHECK


def test_the_stored_checksum_is_the_reference_at_the_test_scale():
    runs = [dict(run_row("w", "custom", "glibc", "Adv0", 1, 1.0, checksum="bb")),
            dict(run_row("w", "naive", "glibc", "Adv0", 1, 1.0, checksum="bb"))]
    refs = measurements.references(runs, [], {"w": {"test": {"scale": SCALE, "seed": 1, "checksum": "cc"}}})
    measurements.judge(runs, refs)
    assert [r["verdict"] for r in runs] == ["mismatch", "mismatch"]  # both agree, but not with workload.json


def test_paired_ratios_use_the_same_round_only(results):
    r = report.Results(results)
    naive = ("freelist16", "naive", SCALE, "glibc", "Adv0")
    custom = ("freelist16", "custom", SCALE, "glibc", "Adv0")
    assert len(r.ratios(naive, custom)) == 6          # rounds 7 and 8 have no good naive run
    runs = list(csv.DictReader((results / "runs.csv").open()))
    for row in runs:  # custom varies from round to round; naive is 1.5x custom in every round
        if row["workload"] == "compiler" and row["mode"] in ("custom", "naive") and row["allocator"] == "glibc" \
                and row["preset"] == "Adv0":
            t = 1 + 0.1 * int(row["round"])
            row["program_seconds"] = row["program_cpu_seconds"] = str(t * (1.5 if row["mode"] == "naive" else 1.0))
    write_csv(results / "runs.csv", RUN_FIELDS, runs)
    r = report.Results(results)
    ratios = r.ratios(("compiler", "naive", SCALE, "glibc", "Adv0"), ("compiler", "custom", SCALE, "glibc", "Adv0"))
    assert ratios == pytest.approx([1.5] * 6)


def test_fragmentation_comes_from_the_memory_runs(results):
    r = report.Results(results)
    assert r.fragmentation_of(("server", "reap", SCALE, "glibc", "Adv0")).median == pytest.approx(1.0)
    assert r.fragmentation_of(("server", "custom", SCALE, "glibc", "Adv0")).median == pytest.approx(2.0)
    assert r.fragmentation_of(("boxed-sim", "naive", SCALE, "glibc", "Adv0")) is None   # no memory run
    assert r.cells[("server", "reap", SCALE, "glibc", "Adv0")].frag is None            # timed runs measure none


# ---------------------------------------------------------------------------
# The report.

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.headings, self.cells, self._in = [], [], [], None

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs)["src"])
        self._in = tag
        self.cells_open = getattr(self, "cells_open", 0) + (tag == "td")

    def handle_endtag(self, tag):
        self._in = None
        self.cells_open -= tag == "td"

    def handle_data(self, data):
        if self._in in ("h1", "h2"):
            self.headings.append(data)
        if getattr(self, "cells_open", 0):   # a cell's text, its folded details too
            self.cells.append(data.lstrip(": "))


def test_report_has_every_section_and_embeds_every_plot(results):
    written = report.render(results)
    plots = sorted((results / "plots").glob("*.png"))
    assert len(plots) >= 8
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in plots)
    md = written["md"].read_text()
    assert all(f"plots/{p.name}" in md for p in plots)
    page = Page()
    page.feed(written["html"].read_text())
    assert all(src.startswith("data:image/png;base64,") for src in page.images)
    assert {base64.b64decode(src.split(",", 1)[1]) for src in page.images} == {p.read_bytes() for p in plots}
    for heading in ["Claims", "Setup", "Per-class allocation (2026 Fig. 4, RQ1)",
                    "Resilience to fragmentation (2026 Fig. 6, RQ3)", "Drag (2002 §7)",
                    "Reaps, regions and naive allocation (2002 Fig. 3, 8 and 9)", "Allocation statistics (2002 Table 3)",
                    "General-purpose allocators (Vam Fig. 2, 3 and 6)", "Heap layers: zero cost (2001 §6)",
                    "Failed runs"]:
        assert heading in page.headings, heading
    assert "claims-forest-2026-1.png" in md and "paper-vs-ours.png" in md   # a forest per paper, paper vs ours
    assert md.index("## At a glance") < md.index("## Claims") < md.index("## Setup") < md.index("## Per-class")
    assert "crashed" in md and "mismatch" in md and "ffffffffffffffff" in md
    assert "tcmalloc" in md and "apt-get install libgoogle-perftools4" in md
    assert "PARTIAL" not in md


def test_the_claims_table_shows_verdict_interval_and_source_for_every_claim(results):
    md = report.render(results)["md"].read_text()
    claims = report.claims_of(results)
    table = md[md.index("| verdict | claim | paper | paper's figure | ours (interval, level) | reason |"):
               md.index("Each claim in full:")]
    rows = [line for line in table.splitlines()[2:] if line.startswith("| ")]
    assert len(rows) == len(claims) >= 25
    full = md[md.index("Each claim in full:"):]
    for claim, row in zip(claims, rows):
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        assert cells[0] == claim.verdict and cells[1] == claim.statement.replace("|", "\\|")
        assert cells[2].endswith(("ISMM 2026", "OOPSLA 2002", "OOPSLA 2002 talk", "MSP 2005", "PLDI 2001", "ours"))
        assert all(len(c) <= 300 for c in cells)
        # the quoted sentence and every program's interval, in the claim's full entry
        assert claim.source.text() in full and (not claim.estimates or claim.interval_text() in full)
    boxed = next(c for c in claims if c.key == "per-class.boxed-sim.mimalloc-gain")
    assert boxed.verdict == "held" and boxed.estimates["mimalloc"].value == pytest.approx(1.025, rel=0.01)
    lea = next(c for c in claims if c.key == "heap-layers.lea-layers")   # 1.3x glibc: outside [0.995, 1.2]
    assert lea.verdict == "not held"


def test_markdown_and_html_say_the_same_things(results):
    written = report.render(results)
    md, page = written["md"].read_text(), Page()
    page.feed(written["html"].read_text())
    html_cells = set(page.cells)
    text = " ".join(page.cells)
    for claim in report.claims_of(results):
        assert claim.statement in md and claim.statement in html_cells
        assert claim.interval_text() in md and claim.interval_text() in text
    md_headings = [line[3:] for line in md.splitlines() if line.startswith("## ")]
    assert md_headings == [h for h in page.headings if h != "strata evaluation"]


def test_a_partial_report_says_so(tmp_path):
    folder = Synthetic().write(tmp_path / "partial", partial=True)
    md = report.render(folder)["md"].read_text()
    assert md.startswith("# strata evaluation — PARTIAL (interrupted)")
    assert "PARTIAL REPORT: the evaluation was interrupted" in md


def test_the_drag_section_is_built_from_the_raw_bench_rows(tmp_path):
    s = Synthetic()
    s.bench = [{"bench": "object-drag", "round": 1, "contender": "geometry", "allocator": mode, "status": "ok",
                "scale": 15, "total_drag": drag, "peak_in_use_bytes": 2048 * 1024, "peak_ideal_bytes": 512 * 1024}
               for mode, drag in (("naive", 3.4), ("reap", 1.0))]
    md = report.render(s.write(tmp_path / "r"))["md"].read_text()
    assert "| geometry | 15 | 3.40 | 1.00 | 2,048 / 512 KiB |" in md   # its empty column left out


def test_report_command_rerenders_from_raw_results(results):
    from conftest import lab
    first = lab("report", results)
    assert first.returncode == 0, first.stderr
    assert str(results / "report.html") in first.stdout
    bad = lab("report", results / "plots")
    assert bad.returncode == 2 and "not an evaluation results folder" in bad.stderr
