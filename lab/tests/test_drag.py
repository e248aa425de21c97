"""strata-drag (docs/drag.md): programs with known drag give exact figures.

tests/drag/drag_cases.c allocates, touches and reclaims objects at known
points of allocation time; each plan below lists its objects as
(size, allocated at, last access, reclaimed at), and the expected figures are
computed from the plan, independently of the tool."""
import csv
import json
import os
import stat
import subprocess

import pytest

from conftest import BUILD, lab

CASES = BUILD / "tests/drag/drag_cases"
TOOL = BUILD / "src/drag/lib/strata-drag-amd64-linux"

pytestmark = pytest.mark.skipif(not TOOL.exists(), reason="strata-drag not built (a sanitizer build)")


def measure(mode, **kwargs):
    from strata_lab import drag
    os.environ["STRATA_LAB_BUILD_DIR"] = str(BUILD)
    return drag.measure([str(CASES), mode], quiet=True, **kwargs)


def expected(plan):
    """Areas, peaks and allocation time of a plan, by brute force over time."""
    end = max(free for _, _, _, free in plan)
    in_use = sum(size * (free - alloc) for size, alloc, _, free in plan)
    ideal = sum(size * (last - alloc) for size, alloc, last, _ in plan)
    curve = [(sum(s for s, a, _, f in plan if a <= t < f), sum(s for s, a, last, _ in plan if a <= t < last))
             for t in range(end + 1)]
    return {"in_use_area": in_use, "ideal_area": ideal, "total_drag": in_use / ideal,
            "peak_in_use_bytes": max(c[0] for c in curve), "peak_ideal_bytes": max(c[1] for c in curve),
            "objects": len(plan), "curve": curve}


def assert_figures(result, plan):
    want = expected(plan)
    for key in ("in_use_area", "ideal_area", "peak_in_use_bytes", "peak_ideal_bytes", "objects"):
        assert result[key] == want[key], key
    assert result["total_drag"] == pytest.approx(want["total_drag"], rel=1e-12)
    assert result["allocation_time_bytes"] == sum(size for size, *_ in plan)
    assert result["curve_resolution_bytes"] == 1
    for point in result["curves"]:  # exact at resolution 1
        t = point["allocation_time_bytes"]
        assert (point["in_use_bytes"], point["ideal_bytes"]) == want["curve"][t], t
    assert result["partial"] is False


# a 100 B touched only when allocated; b 1000 B touched again after c.
LAST_USE = [(100, 0, 100, 2000), (1000, 100, 1500, 2000), (400, 1100, 1500, 1500), (500, 1500, 2000, 2000)]


def test_objects_touched_last_at_known_points():
    result = measure("last-use")
    assert_figures(result, LAST_USE)
    assert result["ended"]["free"] == 4


def test_a_region_cleared_at_a_known_point():
    # p1, p2, p3 in a mempool destroyed at 512, p1 touched again at 256; then a malloc'd 256 B,
    # and two empty objects announced at one address (the second replaces the first).
    plan = [(64, 0, 256, 512), (64, 64, 128, 512), (128, 128, 256, 512), (256, 256, 512, 512),
            (0, 512, 512, 512), (0, 512, 512, 512)]
    result = measure("region")
    assert_figures(result, plan)
    assert result["ended"]["pool_clear"] == 4 and result["ended"]["free"] == 1


def test_a_reap_with_individual_frees_and_a_clear():
    # strata's reap announces each object with its usable size: 64 -> 79, 128 -> 143, 256 -> 271.
    plan = [(79, 0, 301, 380), (79, 79, 158, 301), (143, 158, 301, 380), (79, 301, 380, 380),
            (271, 380, 651, 651)]
    result = measure("reap")
    assert_figures(result, plan)
    assert result["ended"]["pool_free"] == 1 and result["ended"]["pool_clear"] == 4
    # The reap's own bookkeeping (checked under Valgrind) is not the program's.
    assert result["left_out"]["ignored_alloc"] > 0
    assert all("drag_cases.c" in s["site"] for s in result["sites"])


def test_realloc_moving_an_object():
    # a 100 B moved to 300 B at 150 (the copy is not an access of the old block).
    plan = [(100, 0, 100, 150), (50, 100, 450, 450), (300, 150, 450, 500), (50, 450, 500, 500)]
    result = measure("realloc")
    assert_figures(result, plan)
    assert result["ended"]["realloc"] == 1


def site_by(result, function, size):
    found = [s for s in result["sites"] if s["frames"][0].startswith(function + " (drag_cases.c")
             and s["bytes"] == size]
    assert len(found) == 1, [s["site"] for s in result["sites"]]
    return found[0]


def test_two_threads():
    # shared 128 B touched last by the first thread at 384; glibc's own
    # thread set-up allocations come before and are figures of their own sites.
    result = measure("threads")
    plans = {("threads", 128): (128, 0, 384, 960), ("first_thread", 256): (256, 128, 384, 384),
             ("second_thread", 512): (512, 384, 960, 960), ("threads", 64): (64, 896, 960, 960)}
    for (function, size), (s, a, last, f) in plans.items():
        site = site_by(result, function, size)
        assert (site["in_use_area"], site["ideal_area"]) == (s * (f - a), s * (last - a)), function
        assert site["drag_time"] == f - last
    assert result["partial"] is False


def test_site_table_names_the_site_with_drag():
    result = measure("two-sites")
    top, other = result["sites"][0], site_by(result, "use_and_free", 1000)
    assert top["frames"][0].startswith("keep_long (drag_cases.c:")
    assert top["objects"] == 10 and top["drag_share"] == 1.0
    assert top["drag_area"] == sum(100 * (2000 - 200 * i - 100) for i in range(10))
    assert other["drag_area"] == 0 and other["objects"] == 10
    assert result["total_drag"] == pytest.approx(1_200_000 / 200_000)


def test_a_stripped_program_finds_main_through_libc(tmp_path):
    # No symbol "main": the tool takes main's address from __libc_start_main's first argument.
    stripped = tmp_path / "drag_cases"
    subprocess.run(["strip", "-o", stripped, CASES], check=True)
    from strata_lab import drag
    result = drag.measure([str(stripped), "last-use"], quiet=True)
    assert result["main_seen"] is True
    assert_figures(result, LAST_USE)


def test_a_program_that_execs_is_measured_as_its_final_image():
    from strata_lab import drag
    result = drag.measure(["sh", "-c", f"exec '{CASES}' last-use"], quiet=True)
    assert_figures(result, LAST_USE)


def test_same_figures_under_glibc_malloc_and_libstrata():
    libstrata = BUILD / "src/malloc/libstrata.so"
    glibc, strata = measure("last-use"), measure("last-use", preload=[str(libstrata)])
    for key in ("in_use_area", "ideal_area", "peak_in_use_bytes", "peak_ideal_bytes", "objects", "curves"):
        assert glibc[key] == strata[key], key


def test_a_crashing_program_gives_partial_results():
    result = measure("crash")
    assert result["partial"] is True
    assert result["status"]["signal"] == 11
    assert result["objects"] == 2 and result["objects_live_at_exit"] == 2
    assert result["in_use_area"] == 100 * 300 + 200 * 200  # both end at the crash, last touched then


def test_cli_writes_every_output_and_reports_partial(tmp_path):
    out = tmp_path / "out"
    done = lab("drag", "-o", out, "--", CASES, "two-sites")
    assert done.returncode == 0, done.stderr
    assert "total drag 6.000" in done.stdout and "keep_long" in done.stdout
    figures = json.loads((out / "drag.json").read_text())
    assert figures["total_drag"] == pytest.approx(6.0)
    with open(out / "sites.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["site"].startswith("keep_long") and float(rows[0]["drag_share"]) == 1.0
    with open(out / "curves.csv") as f:
        assert len(list(csv.DictReader(f))) == len(figures["curves"]) > 100
    assert (out / "curves.png").stat().st_size > 1000
    assert "keep_long" in (out / "sites.md").read_text()

    crashed = lab("drag", "-o", tmp_path / "crash", "--", CASES, "crash")
    assert crashed.returncode == 1
    assert "killed by SIGSEGV" in crashed.stdout and "PARTIAL" in crashed.stdout
    assert json.loads((tmp_path / "crash" / "drag.json").read_text())["partial"] is True

    failed = lab("drag", "-o", tmp_path / "usage", "--", CASES)  # no mode: exits with status 2
    assert failed.returncode == 1 and "exited with status 2" in failed.stdout
    assert json.loads((tmp_path / "usage" / "drag.json").read_text())["partial"] is False


def test_bad_input(tmp_path):
    missing = lab("drag", "-o", tmp_path / "a", "--", tmp_path / "no-such-program")
    assert missing.returncode == 2 and "no-such-program: program not found" in missing.stderr
    assert lab("drag", "-o", tmp_path / "a", "--", "no-such-program-in-path").returncode == 2

    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\n")
    script.chmod(stat.S_IRUSR | stat.S_IWUSR)
    denied = lab("drag", "-o", tmp_path / "a", "--", script)
    assert denied.returncode == 2 and "not an executable file" in denied.stderr

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    unwritable = lab("drag", "-o", blocker / "out", "--", CASES, "last-use")
    assert unwritable.returncode == 2 and f"cannot write to the output folder {blocker / 'out'}" in unwritable.stderr

    assert lab("drag", "-o", tmp_path / "a").returncode == 2  # no command

    unbuilt = lab("drag", "-o", tmp_path / "a", "--", CASES, "last-use", env={"STRATA_LAB_BUILD_DIR": tmp_path})
    assert unbuilt.returncode == 2 and "strata-drag-amd64-linux is missing" in unbuilt.stderr


# ---- the evaluation's [bench.object-drag] step -------------------------------

OBJECT_DRAG = """
[evaluation]
runs = 5

[bench.object-drag]
workloads = ["router"]
modes = ["naive", "reap"]
scale = 0.1
"""


@pytest.mark.parametrize("change, message", [
    (('["router"]', '["nope"]'), "bench.object-drag.workloads[0]: unknown workload 'nope'"),
    (('["naive", "reap"]', '["naïve"]'), "bench.object-drag.modes[0]: unknown mode 'naïve'"),
    (('scale = 0.1', 'scale = -0.5'), "bench.object-drag.scale: -0.5: must be > 0"),
    (('scale = 0.1', 'runs = 3'), "bench.object-drag.runs: unknown field"),
])
def test_object_drag_config_errors_name_the_field(change, message):
    from strata_lab.evaluation import configuration
    from strata_lab.errors import LabError
    with pytest.raises(LabError) as error:
        configuration.parse(OBJECT_DRAG.replace(*change), "test.toml", ["router", "boxed-sim"], ["glibc"])
    assert message in str(error.value)
    configuration.parse(OBJECT_DRAG, "test.toml", ["router"], ["glibc"])  # the unchanged text parses


