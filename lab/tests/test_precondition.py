"""Adversarial preconditioning (Algorithm 3) leaves exactly the stated number
of live objects, checked by stacking the profiler after the preconditioner."""
import json

import pytest

from conftest import PATTERNS, lab_ok, run_with_shims
from strata_lab import precondition

HISTOGRAM = {"32": 5, "64": 3, "1000": 2}
PEAK = 1000


@pytest.fixture
def profile_file(tmp_path):
    path = tmp_path / "given.json"
    counts = dict(cutoff=4096, total_objects=10, total_bytes=2352, peak_live_objects=PEAK, peak_live_bytes=2352,
                  realloc_calls=0, free_calls=10, live_objects_at_exit=0, live_bytes_at_exit=0, large_objects=0,
                  large_bytes=0, unknown_frees=0, untracked_objects=0, average_size=235.2)
    path.write_text(json.dumps(dict(format="strata-profile", version=1, size_histogram=HISTOGRAM, **counts)))
    return path


def expected_kept(multiplier, occupancy):
    n = round(multiplier * PEAK)
    return n, n - round(n * (1 - occupancy))


@pytest.mark.parametrize("allocator", ["glibc", "jemalloc", "strata"])
@pytest.mark.parametrize("multiplier,occupancy", [(1, 0.33), (3, 0.66), (10, 0.8), (0.5, 0.0)])
def test_profiler_after_preconditioner_sees_exactly_the_kept_objects(tmp_path, profile_file, allocator,
                                                                     multiplier, occupancy):
    profile_out = tmp_path / "stacked.%p.json"
    result = run_with_shims(["precondition", "profile"], [PATTERNS, "nothing"], {
        "STRATA_LAB_PRECOND_PROFILE": profile_file, "STRATA_LAB_PRECOND_MULTIPLIER": multiplier,
        "STRATA_LAB_PRECOND_OCCUPANCY": occupancy, "STRATA_LAB_PRECOND_SEED": 42,
        "STRATA_LAB_PRECOND_REPORT": tmp_path / "report.%p.json", "STRATA_LAB_PROFILE_OUT": profile_out}, allocator)
    assert result.returncode == 0, result.stderr
    (stacked_path,) = tmp_path.glob("stacked.*.json")
    (report_path,) = tmp_path.glob("report.*.json")
    stacked, report = json.loads(stacked_path.read_text()), json.loads(report_path.read_text())
    n, kept = expected_kept(multiplier, occupancy)
    assert (report["allocated_objects"], report["freed_objects"], report["kept_objects"]) == (n, n - kept, kept)
    # On a peer allocator the C++ runtime it loads keeps a few objects of its own (sizes >= cutoff):
    # compare within the sizes the profile allows.
    sizes = {int(s) for s in HISTOGRAM}
    ours = {int(s): c for s, c in stacked["size_histogram"].items() if int(s) in sizes}
    foreign_live = stacked["live_objects_at_exit"] - kept
    assert sum(ours.values()) == n
    assert set(stacked["size_histogram"]) <= set(HISTOGRAM)
    assert foreign_live == (0 if allocator == "glibc" else stacked["large_objects"])
    assert stacked["free_calls"] == n - kept
    assert stacked["live_bytes_at_exit"] - stacked["large_bytes"] == report["kept_bytes"]
    # Sizes are drawn in proportion to the histogram (5:3:2).
    for size, count in HISTOGRAM.items():
        assert ours[int(size)] / n == pytest.approx(count / 10, abs=0.05 if n >= 1000 else 0.1)


def test_same_seed_same_heap_other_seed_other_heap(tmp_path, profile_file):
    def kept_bytes(seed):
        out = tmp_path / f"run-{seed}-{len(list(tmp_path.iterdir()))}.json"
        lab_ok("run", "--alloc", "glibc", "--preset", "Adv3", "--profile", profile_file, "--seed", seed,
               "--json", out, "--", PATTERNS, "nothing")
        return json.loads(out.read_text())["precondition"]["kept_bytes"]
    assert kept_bytes(7) == kept_bytes(7)
    assert kept_bytes(7) != kept_bytes(8)


@pytest.mark.parametrize("preset,multiplier,occupancy", [("Adv0", 0, 0), ("Adv1", 1, 0.33), ("Adv3", 3, 0.66),
                                                         ("Adv10", 10, 0.8), ("M10-O0", 10, 0.0),
                                                         ("M10-O60", 10, 0.6), ("M10-O90", 10, 0.9)])
def test_run_presets_report_preconditioning_and_time(tmp_path, profile_file, preset, multiplier, occupancy):
    out = tmp_path / "run.json"
    result = lab_ok("run", "--alloc", "jemalloc", "--preset", preset, "--profile", profile_file, "--json", out,
                    "--", PATTERNS, "basic")
    summary = json.loads(out.read_text())
    n, kept = expected_kept(multiplier, occupancy)
    assert (summary["multiplier"], summary["occupancy"]) == (multiplier, occupancy)
    assert summary["precondition"]["allocated_objects"] == n
    assert summary["precondition"]["kept_objects"] == kept
    assert 0 < summary["program_seconds"] < 10
    assert summary["peak_rss_bytes"] > 0
    assert f"{kept:,} of {n:,} objects" in result.stdout


def test_the_occupancy_sweep_fixes_the_multiplier_and_rises_in_occupancy():
    sweep = precondition.SWEEP + [precondition.PRESETS["Adv10"]]
    assert {p.multiplier for p in sweep} == {10}
    assert sorted(p.occupancy for p in sweep) == [0.0, 0.2, 0.4, 0.6, 0.8, 0.9]
    assert all(precondition.choose(p.name.lower(), None, None) == p for p in sweep)


def test_custom_values_override_a_preset(tmp_path, profile_file):
    out = tmp_path / "run.json"
    lab_ok("run", "--alloc", "glibc", "--preset", "Adv3", "--occupancy", "0.5", "--profile", profile_file,
           "--json", out, "--", PATTERNS, "nothing")
    summary = json.loads(out.read_text())
    assert (summary["preset"], summary["multiplier"], summary["occupancy"]) == ("custom", 3, 0.5)
    assert summary["precondition"]["kept_objects"] == 1500


def test_program_time_excludes_preconditioning(tmp_path, profile_file):
    """Adv10 on a big profile spends visible time preconditioning; the program's
    reported time must not contain it."""
    big = json.loads(profile_file.read_text())
    big["peak_live_objects"] = 200000
    profile_file.write_text(json.dumps(big))
    out = tmp_path / "run.json"
    lab_ok("run", "--alloc", "glibc", "--preset", "Adv10", "--profile", profile_file, "--json", out,
           "--", PATTERNS, "nothing")
    summary = json.loads(out.read_text())
    assert summary["precondition"]["allocated_objects"] == 2000000
    # Were preconditioning counted, the program time would be at least as long.
    assert summary["program_seconds"] < summary["precondition_seconds"] / 2


def test_shim_rejects_bad_settings_naming_the_variable(tmp_path, profile_file):
    for variable, value in [("STRATA_LAB_PRECOND_OCCUPANCY", "2"), ("STRATA_LAB_PRECOND_MULTIPLIER", "x"),
                            ("STRATA_LAB_PRECOND_SEED", "-1")]:
        env = {"STRATA_LAB_PRECOND_PROFILE": profile_file, "STRATA_LAB_PRECOND_MULTIPLIER": 1, variable: value}
        result = run_with_shims(["precondition"], [PATTERNS, "basic"], env)
        assert result.returncode == 2
        assert variable in result.stderr and value in result.stderr
    result = run_with_shims(["precondition"], [PATTERNS, "basic"], {"STRATA_LAB_PRECOND_MULTIPLIER": 1})
    assert result.returncode == 2 and "STRATA_LAB_PRECOND_PROFILE" in result.stderr


def test_without_a_report_file_the_shim_says_what_it_did(profile_file):
    result = run_with_shims(["precondition"], [PATTERNS, "nothing"], {
        "STRATA_LAB_PRECOND_PROFILE": profile_file, "STRATA_LAB_PRECOND_MULTIPLIER": 1, "STRATA_LAB_PRECOND_OCCUPANCY": 0.33})
    assert result.returncode == 0
    assert "strata-precondition: allocated 1000 objects" in result.stderr
    assert "freed 670, kept 330" in result.stderr


def test_end_to_end_profile_then_precondition_from_it(tmp_path):
    """A profile written by the profiler drives the preconditioner: the mixed
    pattern peaks at 1262 live objects; Adv3 keeps 3786 - round(3786 x 0.34)."""
    profile = tmp_path / "mixed.json"
    lab_ok("profile", "-o", profile, "--", PATTERNS, "mixed")
    peak = json.loads(profile.read_text())["peak_live_objects"]
    out = tmp_path / "run.json"
    lab_ok("run", "--alloc", "mimalloc", "--preset", "Adv3", "--profile", profile, "--json", out,
           "--", PATTERNS, "mixed")
    pre = json.loads(out.read_text())["precondition"]
    n = round(3 * peak)
    assert (pre["allocated_objects"], pre["kept_objects"]) == (n, n - round(n * 0.34))
