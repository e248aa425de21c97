"""The heap-layers programs comparison (2001 Table 5/6) and the vam-variants
section (Vam Table 2) judged on synthetic results with known ratios."""
import pytest

import synthetic
from strata_lab import report
from synthetic import Synthetic

WORKLOADS = ["cfrac", "parser"]
EXPERIMENTS = [e for e in synthetic.EXPERIMENTS if e[0] not in ("heap-layers", "vam-variants")] + [
    ("heap-layers", WORKLOADS, ["glibc", "kingsley", "lea", "kingsley-hand"], ["naive"], ["Adv0"]),
    ("vam-variants", WORKLOADS, ["vam", "vam-header", "vam-coarse"], ["naive"], ["Adv0"]),
]


def folder(tmp_path, monkeypatch, times: dict, memory: dict):
    """A results folder whose cells take times[allocator] seconds and memory[allocator] bytes in use."""
    monkeypatch.setattr(synthetic, "EXPERIMENTS", EXPERIMENTS)
    s = Synthetic()
    for w in WORKLOADS:
        for alloc, seconds in times.items():
            s.set(w, "naive", alloc, "Adv0", seconds)
        for alloc, in_use in memory.items():
            s.set_memory(w, "naive", alloc, in_use)
    return s.write(tmp_path / "results")


def verdicts(path) -> dict:
    return {c.key: c.verdict for c in report.claims_of(path)}


def test_layers_within_the_papers_figures_hold(tmp_path, monkeypatch):
    path = folder(tmp_path, monkeypatch, {"kingsley": 1.005, "kingsley-hand": 1.0, "lea": 1.1, "glibc": 1.0},
                  {"kingsley": 1 << 20, "kingsley-hand": 1 << 20, "lea": 1.1 * (1 << 20), "glibc": 1 << 20})
    v = verdicts(path)
    assert v["heap-layers.kingsley-programs-time"] == "held"
    assert v["heap-layers.lea-programs-time"] == "held"
    assert "heap-layers.kingsley-programs-memory" not in v  # kingsley-hand is KingsleyHeap's own policy
    assert v["heap-layers.lea-programs-memory"] == "held"
    md = report.render(path)["md"].read_text()
    assert "kingsley / kingsley-hand" in md and "Debian packages no dlmalloc" in md
    assert "Not judged" in md and "takes 1.000–1.000 of the pages" in md


def test_layers_beyond_the_papers_figures_do_not_hold(tmp_path, monkeypatch):
    path = folder(tmp_path, monkeypatch, {"kingsley": 1.1, "kingsley-hand": 1.0, "lea": 1.4, "glibc": 1.0},
                  {"kingsley": 2 << 20, "kingsley-hand": 1 << 20, "lea": 3 << 20, "glibc": 1 << 20})
    v = verdicts(path)
    assert [v[f"heap-layers.{k}"] for k in ("kingsley-programs-time", "lea-programs-time",
                                            "lea-programs-memory")] == ["not held"] * 3
    assert "takes 2.000–2.000 of the pages" in report.render(path)["md"].read_text()  # shown, not judged


def test_vam_variants_costs_are_judged_against_vam(tmp_path, monkeypatch):
    path = folder(tmp_path, monkeypatch, {"vam": 1.0, "vam-header": 1.1, "vam-coarse": 1.01},
                  {"vam": 1 << 20, "vam-header": 1.2 * (1 << 20), "vam-coarse": 1.3 * (1 << 20)})
    v = verdicts(path)
    assert v["vam-variants.header-time"] == v["vam-variants.header-parser"] == "held"
    assert v["vam-variants.header-memory"] == v["vam-variants.coarse-memory"] == "held"
    assert v["vam-variants.coarse-time"] == "held"
    assert "vam-variants.bitmap-time" not in v   # no bitmap layer: said in the section, no claim that cannot be judged
    written = report.render(path)
    md = written["md"].read_text()
    assert "## Vam's variants" in md and "vam-header / vam" in md
    assert (path / "plots" / "vam-variants-peak_in_use_bytes.png").is_file()


@pytest.mark.parametrize("header_time, verdict", [(0.9, "not held"), (1.0, "not held")])
def test_headers_that_cost_nothing_break_the_header_claim(tmp_path, monkeypatch, header_time, verdict):
    path = folder(tmp_path, monkeypatch, {"vam": 1.0, "vam-header": header_time, "vam-coarse": 1.3},
                  {"vam": 1 << 20, "vam-header": 1 << 20, "vam-coarse": 1 << 20})
    v = verdicts(path)
    assert v["vam-variants.header-time"] == verdict
    assert v["vam-variants.header-memory"] == "not held"
    assert v["vam-variants.coarse-time"] == "not held"


def special_rows(layers_seconds: float) -> list:
    rows = [{"bench": "special", "round": rnd, "contender": c, "status": "ok", "seconds": t}
            for rnd in range(1, 7) for c, t in (("xalloc-layers", layers_seconds * (1 + rnd / 1000)),
                                                ("xalloc-hand", 1.0), ("obstack-layers", layers_seconds),
                                                ("obstack-gnu", 1.0))]
    return rows + [{"bench": "special-callgrind", "round": 0, "contender": c, "status": "ok", "instructions": n}
                   for c, n in (("xalloc-layers", 990), ("xalloc-hand", 1000), ("obstack-layers", 900),
                                ("obstack-gnu", 1000))]


@pytest.mark.parametrize("layers_seconds, verdict", [(0.9, "held"), (1.1, "not held")])
def test_special_purpose_layers_are_judged_against_the_originals(tmp_path, monkeypatch, layers_seconds, verdict):
    monkeypatch.setattr(synthetic, "EXPERIMENTS", EXPERIMENTS)
    s = Synthetic()
    s.bench = special_rows(layers_seconds)
    path = s.write(tmp_path / "results")
    claims = {c.key: c for c in report.claims_of(path)}
    assert claims["heap-layers.xalloc-layers"].verdict == claims["heap-layers.obstack-layers"].verdict == verdict
    assert claims["heap-layers.obstack-layers"].note == "callgrind instructions 0.9000"
    md = report.render(path)["md"].read_text()
    assert "| obstack-layers / obstack-gnu |" in md and "xalloc-hand" in md
