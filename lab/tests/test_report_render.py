"""The renderers' table step, the same in Markdown and HTML: columns empty in
every row are left out, "no pairs" is explained once, a long HTML cell folds
into <details>, and a verdict is a text badge."""
from pathlib import Path

from strata_lab.report import renderers as render   # the module (report.render is the function)
from strata_lab.report.results import Section


def table_section() -> Section:
    s = Section("t", "T")
    s.table(["workload", "time", "fragmentation at Adv3", "ratio", "note"],
            [["a", "1.0 s", "not measured", "no pairs", ""],
             ["b", "2.0 s", "not measured", "1.1 [1.0, 1.2]", "—"],
             ["c", "3.0 s", "not measured", "no pairs", "x" * 400]])
    return s


def test_empty_columns_go_and_no_pairs_is_explained_once():
    md = render.to_markdown("r", [table_section()], Path("."))
    assert "| workload | time | ratio | note |" in md and "fragmentation at Adv3" not in md
    assert md.count(render.NO_PAIRS) == 1
    s = Section("u", "U")
    s.table(["workload", "empty"], [["a", ""], ["b", "—"]])
    assert "| workload |\n|---|\n| a |\n| b |" in render.to_markdown("r", [s], Path("."))


def test_html_folds_long_cells_and_draws_verdicts_as_text_badges():
    s = table_section()
    s.table(["verdict", "claim"], [["not held", "x"], ["held", "y"]])
    page = render.to_html("r", [s])
    assert "fragmentation at Adv3" not in page and page.count("no round has a good run of both cells") == 1
    assert "<details><summary>" + "x" * 120 + "…</summary>" + "x" * 400 + "</details>" in page
    assert '<span class="badge v-not-held">not held</span>' in page and '<span class="badge v-held">held</span>' in page
    assert not any(ord(ch) >= 0x2600 for ch in page)   # no emoji or symbol glyphs anywhere
