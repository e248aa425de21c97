"""The report's pieces for issue 18's 2002 and 2026 figures: a section's
experiments joined into one (resilience), the occupancy sweep's presets, and
which programs each drag claim takes."""
import json

from strata_lab import report
from strata_lab.report.results import Results
from strata_lab.report.sections import drag, occupancy, resilience
from synthetic import SCALE, Synthetic


def test_experiments_of_a_section_join_into_one_in_preset_order():
    first = {"section": "resilience", "workloads": ["interp", "parser"], "allocators": ["glibc"],
             "modes": ["custom", "naive"], "presets": ["Adv3", "Adv0"], "scales": {"interp": 3, "parser": 2}}
    second = {"section": "resilience", "workloads": ["parser", "router"], "allocators": ["jemalloc"],
              "modes": ["naive"], "presets": ["Adv10", "Adv1"], "scales": {"parser": 9, "router": 1}}
    e = resilience.merged([first, second])
    assert e["workloads"] == ["interp", "parser", "router"]
    assert e["allocators"] == ["glibc", "jemalloc"]
    assert e["presets"] == ["Adv0", "Adv1", "Adv3", "Adv10"]
    assert e["scales"] == {"interp": 3, "parser": 2, "router": 1}   # a workload's first scale
    assert resilience.merged([]) is None


def test_the_sweep_takes_one_multiplier_by_rising_occupancy():
    names = [p.name for p in occupancy.sweep_presets(["M10-O90", "Adv0", "Adv10", "M10-O0", "Adv3"])]
    assert names == ["M10-O0", "Adv10", "M10-O90"]   # Adv3 (multiplier 3) and Adv0 are not on the sweep
    assert occupancy.sweep_presets(["Adv0"]) == []


def _with_second_resilience_experiment(tmp_path):
    s = Synthetic()
    for w in ("interp", "parser"):
        for m in ("custom", "naive"):
            for p in ("Adv0", "Adv3"):
                s.times[(w, m, SCALE, "jemalloc", p)] = [1.0] * s.rounds
    folder = s.write(tmp_path / "results")
    meta = json.loads((folder / "meta.json").read_text())
    meta["experiments"].append({"section": "resilience", "title": "", "workloads": ["interp", "parser"],
                                "allocators": ["jemalloc"], "modes": ["custom", "naive"], "presets": ["Adv0", "Adv3"],
                                "scales": {"interp": SCALE, "parser": SCALE}, "runs": s.rounds, "cells": 0})
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


def test_a_second_experiment_joins_the_resilience_tables_and_claims(tmp_path):
    folder = _with_second_resilience_experiment(tmp_path)
    section = resilience.build(Results(folder, draw=False))
    rows = [row for block in section.blocks if block[0] == "table" for row in block[2]]
    assert ["interp", "naive", "jemalloc"] in [r[:3] for r in rows]
    assert ["interp", "naive", "glibc"] in [r[:3] for r in rows]
    claims = {c.key: c for c in section.claims}
    assert "parser on jemalloc" in claims["resilience.custom-slows-less"].estimates
    assert "scopes on jemalloc" not in claims["resilience.custom-slows-less"].estimates   # never run
    full_only = [b[1] for b in section.blocks if b[0] == "p" and b[1].startswith("In full only")]
    assert full_only and "jemalloc at Adv0 (scopes)" in full_only[0]


def test_region_drag_leaves_out_the_programs_without_regions(tmp_path):
    s = Synthetic()
    s.bench.extend({"bench": "object-drag", "round": 1, "contender": w, "allocator": "naive", "status": "ok",
                    "scale": 1, "total_drag": d} for w, d in (("compiler", 3.0), ("parser", 1.0), ("text", 1.0)))
    section = drag.build(Results(s.write(tmp_path / "results"), draw=False))
    claims = {c.key: c for c in section.claims}
    assert list(claims["drag.regions-drag"].estimates) == ["compiler"]
    assert claims["drag.regions-drag"].verdict == "held"
    assert list(claims["drag.non-regions-near-one"].estimates) == ["parser"]
    assert list(claims["drag.general-purpose-low"].estimates) == ["text"]
    assert any(b[0] == "p" and "the drag of cfrac, bigbuf" in b[1] for b in section.blocks)


def test_every_new_section_renders_its_plots(tmp_path):
    folder = _with_second_resilience_experiment(tmp_path)
    sections = report.render(folder)["sections"]
    assert "occupancy" in sections
    plots = {p.name for p in (folder / "plots").iterdir()}
    assert {"occupancy-parser-naive-jemalloc.png", "regions-compiler.png", "reaps-fig3.png", "reaps-fig9.png",
            "reaps-memory.png"} <= plots
