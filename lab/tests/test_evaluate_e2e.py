"""`strata-lab evaluate` for real: the smoke config end to end, a crash and a
timeout recorded as such, Ctrl-C leaving a partial report, and the folder lock."""
import csv
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import BUILD, REPO, lab
from strata_lab.evaluation import configuration
from strata_lab import evaluation, report, workloads
from strata_lab.evaluation import folder as results_folders

SMOKE = REPO / "lab" / "configs" / "smoke.toml"


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_smoke_config_end_to_end(tmp_path):
    out = tmp_path / "smoke"
    # (no assertion on its time: a loaded machine moves it; the timeout only catches a hang)
    result = lab("evaluate", "--config", SMOKE, "-o", out, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"report: {out / 'report.html'}" in result.stdout
    meta = json.loads((out / "meta.json").read_text())
    assert meta["partial"] is False
    assert meta["machine"]["cores"] == os.cpu_count() and meta["git"]["commit"]
    runs = rows(out / "runs.csv")
    extra = meta["adaptive"]["extra_runs"]
    assert len(runs) == meta["planned"]["runs"] + extra == meta["completed"]["runs"]
    assert meta["adaptive"]["stopped"] and meta["adaptive"]["budget_s"] > 0
    config = configuration.load(SMOKE, list(workloads.registry()))
    # Every round has its own preconditioning seed and environment padding; CPU time is recorded.
    seeds = {(r["round"], r["precondition_seed"], r["env_padding"]) for r in runs}
    assert len({s[0] for s in seeds}) == len(seeds) >= config.runs
    assert all(float(r["cpu_seconds"]) > 0 for r in runs)
    # Memory runs: every cell of the memory sections, memory_runs times; no fragmentation below 1.
    memory = rows(out / "memory.csv")
    assert memory and len(memory) == meta["planned"]["memory_runs"]
    assert all(m["status"] == "ok" and float(m["fragmentation"]) >= 0.99 for m in memory), memory[:3]
    # Every cell of every experiment ran at least `runs` times, each round once.
    per_cell = {}
    for run in runs:
        per_cell.setdefault((run["workload"], run["mode"], run["allocator"], run["preset"]), []).append(int(run["round"]))
    # (the base rounds 1..runs each once; an adaptive round takes the cells of the claims undecided at that
    # moment, so a cell may sit out one and join the next)
    assert all(sorted(r)[:config.runs] == list(range(1, config.runs + 1)) and len(set(r)) == len(r)
               for r in per_cell.values())
    assert all(len(r) <= config.max_rounds for r in per_cell.values())
    # Interleaved: consecutive runs are not all of one cell.
    assert len({(r["workload"], r["mode"], r["allocator"]) for r in runs[:10]}) > 1
    # The workloads are real and correct: every run ok, one checksum per workload (all modes, allocators, presets).
    failed = [r for r in runs if r["status"] != "ok"]
    assert not failed, failed[:3]
    checksums = {}
    for r in runs:
        checksums.setdefault(r["workload"], set()).add(r["checksum"])
    assert all(len(c) == 1 for c in checksums.values()), checksums
    assert all(float(r["program_seconds"]) > 0 and int(r["peak_rss_bytes"]) > 0 for r in runs)
    profiles = rows(out / "profiles.csv")
    assert profiles and all(p["status"] == "ok" and int(p["peak_live_bytes"]) > 0 for p in profiles)
    bench = rows(out / "bench.csv")
    assert {b["bench"] for b in bench} == {"zero-cost", "zero-cost-callgrind", "special", "special-callgrind", "drag",
                                           "object-drag", "pages"} and all(b["status"] == "ok" for b in bench)
    # The general-purpose and occupancy cells' cachegrind runs, in every evaluation whose config names them.
    cache = rows(out / "valgrind.csv")
    assert len(cache) == meta["cachegrind_cells"] and all(v["status"] == "ok" for v in cache), cache
    assert {v["workload"] for v in cache} == {"cfrac", "router"}, cache
    md = (out / "report.md").read_text()
    assert "plots/gp-cache-misses.png" in md
    for section in ["Per-class allocation", "Regions against general-purpose", "Resilience to fragmentation",
                    "Occupancy sweep", "Real programs", "Reaps, regions and naive", "Allocation statistics",
                    "General-purpose allocators", "Heap layers", "Page-level locality and paging", "Vam's variants"]:
        assert f"## {section}" in md
    assert "| verdict | claim | paper | paper's figure | ours (interval, level) | reason |" in md
    # The smoke config exercises every verdict path.
    verdicts = {c.verdict for c in report.claims_of(out)}
    judged = {c.key: c.verdict for c in report.claims_of(out)}
    assert judged["general-purpose.vam-fewer-l1-misses"] != "not measured"
    assert judged["general-purpose.vam-fewer-l2-misses"] != "not measured"
    assert {"held", "not held", "not measured"} <= verdicts, verdicts
    html = (out / "report.html").read_text()
    images = []

    class Images(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "img":
                images.append(dict(attrs)["src"])
    Images().feed(html)
    plots = list((out / "plots").glob("*.png"))
    assert plots and len(images) == len(plots) and all(i.startswith("data:image/png;base64,") for i in images)
    # Re-rendering from the raw results gives the same report.
    assert lab("report", out).returncode == 0
    assert (out / "report.md").read_text() == md


def _command_workloads(directory: Path) -> dict:
    """Two tiny workloads run as commands: one fine, one that crashes in naive
    mode, hangs in reap mode and prints a wrong checksum at scale 3."""
    program = directory / "prog.py"
    program.write_text(
        "import os, sys, time\n"
        "mode, scale = sys.argv[1], int(sys.argv[2])\n"
        "if mode == 'naive' and sys.argv[3] == 'bad': os.abort()\n"
        "if mode == 'reap' and sys.argv[3] == 'bad': time.sleep(60)\n"
        "data = [bytes(64) for _ in range(2000 * scale)]\n"
        "print('checksum', '%016x' % (len(data) + (7 if scale == 3 and mode == 'custom' else 0)))\n")
    for name, flavour in (("good", "good"), ("bad", "bad")):
        (directory / name).mkdir()
        (directory / name / "workload.json").write_text(json.dumps({
            "name": name, "imitates": "a test", "paper": "none", "kind": "program",
            "modes": ["custom", "naive", "reap"], "default_scale": 1, "test": {"scale": 1, "seed": 1},
            "program": {"runner": "command", "argv": ["{python}", str(program), "{mode}", "{scale}", flavour]}}))
    return workloads.registry(directory)


def test_crashes_timeouts_and_mismatches_are_recorded_and_shown(tmp_path):
    registry = _command_workloads(tmp_path)
    config = configuration.parse(
        "[evaluation]\nruns = 5\ntimeout_s = 1\n"
        "[[experiment]]\nsection = 'reaps'\nworkloads = ['good', 'bad']\nallocators = ['glibc']\n"
        "modes = ['custom', 'reap', 'naive']\n"
        "[[experiment]]\nsection = 'per-class'\nworkloads = ['good']\nallocators = ['glibc']\n"
        "modes = ['custom', 'naive', 'reap']\nscales = {good = 3}\n", "t.toml", list(registry))
    folder = tmp_path / "out"
    meta = evaluation.evaluate(config, registry, folder, stream=open(os.devnull, "w"))
    assert meta["partial"] is False
    runs = rows(folder / "runs.csv")
    status = {}
    for r in runs:
        status.setdefault((r["workload"], r["mode"], r["scale"]), set()).add(r["status"])
    assert status[("bad", "naive", "1")] == {"crashed"}
    assert status[("bad", "reap", "1")] == {"timeout"}
    assert status[("good", "naive", "1")] == {"ok"}
    md = report.render(folder)["md"].read_text()
    failed = md.split("## Failed runs", 1)[1]
    assert "crashed" in failed and "SIGABRT" in failed and "timeout" in failed
    # At scale 3 custom prints another checksum than naive: a mismatch (the profiles of both modes and
    # the runs outvote it), shown, not averaged in.
    assert "mismatch" in failed
    r = report.Results(folder)
    assert r.cells[("good", "custom", 3, "glibc", "Adv0")].time is None
    assert r.cells[("good", "naive", 3, "glibc", "Adv0")].time is not None


def test_two_evaluations_into_one_folder_are_refused(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    with open(folder / ".evaluate.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = lab("evaluate", "--config", SMOKE, "-o", folder)
    assert result.returncode == 2
    assert "another evaluation is writing into this folder" in result.stderr
    assert not (folder / "runs.csv").exists()


def test_ctrl_c_keeps_the_results_and_writes_a_partial_report(tmp_path):
    out = tmp_path / "interrupted"
    env = dict(os.environ, STRATA_LAB_BUILD_DIR=str(BUILD))
    process = subprocess.Popen([sys.executable, "-m", "strata_lab.cli", "evaluate", "--config", str(SMOKE),
                                "-o", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (out / "runs.csv").exists() and len(rows(out / "runs.csv")) >= 3:
            break
        time.sleep(0.1)
    else:
        process.kill()
        pytest.fail("the evaluation made no runs within 120 s")
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-2000:]
    assert "PARTIAL" in stdout and str(out / "report.html") in stdout
    meta = json.loads((out / "meta.json").read_text())
    assert meta["partial"] is True and meta["interrupted"] is True
    kept = rows(out / "runs.csv")
    assert 3 <= len(kept) < meta["planned"]["runs"]
    assert all(r["status"] == "ok" for r in kept)  # the run in flight finished or was dropped, not recorded as failed
    md = (out / "report.md").read_text()
    assert md.startswith("# strata evaluation — PARTIAL (interrupted)")
    assert f"after {len(kept)} of {meta['planned']['runs']} planned runs" in md
    assert "PARTIAL" in (out / "report.html").read_text()


def test_results_latest_points_at_the_newest_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(results_folders, "RESULTS_ROOT", tmp_path)
    first = results_folders.results_folder(None)
    first.mkdir()
    results_folders.point_latest(first)
    second = results_folders.results_folder(None)
    assert second != first  # same second: a suffix, never the same folder
    second.mkdir()
    results_folders.point_latest(second)
    assert (tmp_path / "latest").resolve() == second.resolve()
    results_folders.point_latest(tmp_path.parent)  # a folder elsewhere (-o): latest is left alone
    assert (tmp_path / "latest").resolve() == second.resolve()


def test_cachegrind_counts_misses_and_instructions_per_cell(tmp_path):
    registry = workloads.registry()
    config = configuration.parse(
        "[evaluation]\nruns = 5\ncachegrind_scale = 0.5\ncachegrind_options = ['--D1=8192,4,64']\n"
        "[[experiment]]\nsection = 'occupancy'\nworkloads = ['freelist16']\nallocators = ['glibc']\n"
        "modes = ['custom', 'naive']\npresets = ['Adv0', 'M10-O20', 'M10-O40', 'M10-O60']\n"
        "scales = {freelist16 = 2}\n",
        "t.toml", list(registry))
    folder = tmp_path / "cg"
    meta = evaluation.evaluate(config, registry, folder, cachegrind=True, stream=open(os.devnull, "w"))
    assert meta["cachegrind"] is True and meta["partial"] is False and meta["cachegrind_cells"] == 8
    counted = rows(folder / "valgrind.csv")
    assert len(counted) == 8  # one cachegrind run per cell, at half the cell's scale, keyed by the cell
    assert all(v["status"] == "ok" and v["tool"] == "cachegrind" and int(v["instructions"]) > 0
               and int(v["d1_misses"]) > 0 and v["ll_misses"] != "" for v in counted), counted
    assert {(v["scale"], v["run_scale"]) for v in counted} == {("2", "1")}
    # The simulated L1 is the config's 8 KiB, not cachegrind's guess of this machine's.
    out = next((folder / "valgrind").glob("cachegrind.*naive*Adv0*")).read_text()
    assert "D1 cache:         8192 B, 64 B, 4-way associative" in out
    # A preconditioned run draws from a profile of its own (run) scale.
    assert any(p["workload"] == "freelist16" and p["scale"] == "1" for p in rows(folder / "profiles.csv"))
    # The naive mode calls malloc for every object: more instructions than the freelist.
    ins = {(v["mode"], v["preset"]): int(v["instructions"]) for v in counted}
    assert ins[("naive", "Adv0")] > ins[("custom", "Adv0")]
    md = report.render(folder)["md"].read_text()
    assert "r (LL misses, time)" in md and "plots/cache-ll.png" in md
