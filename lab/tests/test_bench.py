"""strata-lab bench: a bad option is named before anything runs, a missing
contender fails with its install hint, and each benchmark runs end to end on
tiny sizes and prints its tables."""
import pytest

from strata_lab.bench import common, malloc
from strata_lab.errors import LabError, ProgramFailed

from conftest import lab, lab_ok


def assert_error(result, *fragments):
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.startswith("strata-lab: error: "), result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr
    assert "|" not in result.stdout  # no table: nothing ran


# An empty build directory: an option error must come before the benchmark
# even looks for its programs (which would be an error about the build).
@pytest.mark.parametrize("argv, fragments", [
    (["layers", "--rounds", "3"], ["--rounds 3: at least 5"]),
    (["layers", "--ops", "0"], ["--ops 0: must be at least 1"]),
    (["reap", "--rounds", "4"], ["--rounds 4: at least 5"]),
    (["reap", "--contenders", "inline,nosuch"], ["--contenders: unknown name(s) nosuch", "inline, inline8, bump, reap, sized-reap"]),
    (["reap", "--shapes", "huge"], ["--shapes: unknown name(s) huge; known: large, small"]),
    (["reap", "--drag-runs", "0"], ["--drag-runs 0"]),
    (["malloc", "--rounds", "2"], ["--rounds 2: at least 5", "--quick allows fewer"]),
    (["malloc", "--quick", "--rounds", "0"], ["--rounds 0"]),
    (["malloc", "--contenders", "glibc,nosuch"], ["--contenders: unknown name(s) nosuch", "libstrata"]),
    (["malloc", "--workloads", "churn,nope"], ["--workloads: unknown name(s) nope", "threadsmall"]),
    (["malloc", "--programs", "emacs"], ["--programs: unknown name(s) emacs", "python3-startup"]),
    (["malloc", "--contenders", "glibc,mimalloc", "--reference", "tcmalloc"],
     ["--reference: 'tcmalloc' is not among the contenders (glibc, mimalloc)"]),
    (["malloc", "--contenders", "glibc", "--baseline", "/nonexistent/libstrata.so"],
     ["--baseline /nonexistent/libstrata.so: no such file"]),
    (["shims", "--rounds", "1"], ["--rounds 1: at least 5"]),
    (["shims", "--allocators", "glibc,hoard"], ["--allocators: unknown name(s) hoard"]),
    (["shims", "--shims", "drag"], ["--shims: unknown name(s) drag; known: profile, trace"]),
])
def test_a_bad_option_is_named_before_anything_runs(tmp_path, argv, fragments):
    assert_error(lab("bench", *argv, env={"STRATA_LAB_BUILD_DIR": tmp_path}), *fragments)


def test_an_unknown_benchmark_lists_the_benchmarks():
    result = lab("bench", "speed")
    assert result.returncode == 2 and "layers" in result.stderr and "malloc" in result.stderr


@pytest.mark.parametrize("contender, hint", [("mimalloc3", "make peers"), ("snmalloc", "make peers")])
def test_a_missing_contender_fails_with_its_install_hint(tmp_path, contender, hint):
    result = lab("bench", "malloc", "--quick", "--rounds", "1", "--contenders", f"glibc,{contender}",
                 env={"STRATA_LAB_PEERS_DIR": tmp_path / "no-peers"})
    assert_error(result, f"--contenders {contender}: {tmp_path}/no-peers/", "is missing; to get it: " + hint)


def test_a_missing_libstrata_fails_with_its_build_hint(tmp_path):
    result = lab("bench", "malloc", "--quick", "--rounds", "1", "--contenders", "glibc,libstrata",
                 "--libstrata", tmp_path / "libstrata.so")
    assert_error(result, "--contenders libstrata:", "libstrata.so is missing; to get it: make build")


def test_the_default_contenders_leave_out_the_missing_ones_with_a_note(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("STRATA_LAB_PEERS_DIR", str(tmp_path))
    chosen = common.available_allocators("--contenders", None, malloc.CONTENDERS,
                                         lambda name: malloc.REGISTRY_NAME.get(name, name))
    assert "mimalloc3" not in chosen and "snmalloc" not in chosen
    assert {"glibc", "jemalloc", "tcmalloc", "mimalloc", "scudo", "libstrata"} <= set(chosen)
    assert "left out, not installed or not built: mimalloc3 (make peers" in capsys.readouterr().err


# ---- end to end, tiny sizes -------------------------------------------------

def test_layers_end_to_end():
    out = lab_ok("bench", "layers", "--rounds", "5", "--ops", "20000", "--no-callgrind").stdout
    assert "## Zero-cost layers: 5 interleaved rounds, 20000 allocations each" in out
    for contender in ("kingsley-layers", "kingsley-monolithic", "lea-layers", "glibc", "bump"):
        assert f"| {contender} | " in out
    assert "| kingsley-layers / kingsley-monolithic | " in out and "| lea-layers / glibc | " in out
    assert "Instructions" not in out


def test_reap_end_to_end():
    out = lab_ok("bench", "reap", "--quick", "--rounds", "5", "--shapes", "small", "--contenders",
                 "inline,inline8,bump,reap,sized-reap", "--drag-runs", "1").stdout
    assert "### Region workload, shape `small`: 2000 objects of 8–64 bytes per round, 500 rounds" in out
    assert "| inline | " in out and "1.00 (baseline)" in out
    assert "### Drag workload (--phases 10 --objects 20000)" in out
    assert "| reap | yes | " in out and "| reap | no (region) | " in out
    assert "| inline8 | " in out and "| sized-reap | " in out and "| sized-reap | yes | " in out
    assert "`strata-lab bench reap --quick --rounds 5" in out


def test_malloc_end_to_end():
    result = lab_ok("bench", "malloc", "--quick", "--rounds", "1", "--contenders", "glibc,mimalloc,libstrata",
                    "--workloads", "churn,burst", "--programs", "python3-startup")
    out = result.stdout
    assert "## Malloc benchmarks" in out and "1 interleaved rounds (--quick)" in out
    assert "### geometric means over the 2 workloads, against mimalloc" in out
    assert "### churn: " in out and "### burst: " in out
    churn, burst = out.split("### churn: ")[1].split("### burst: ")
    # Only burst measures the RSS after an idle spell (the last column).
    assert "| libstrata | " in churn and churn.split("| libstrata | ")[1].split("\n")[0].endswith("| - |")
    assert not burst.split("| libstrata | ")[1].split("\n")[0].endswith("| - |")
    assert "| libstrata | " in out and "| python3-startup | " in out
    assert "- glibc: no LD_PRELOAD (glibc malloc)" in out and "- libstrata: /" in out
    assert "round 1/1 churn  libstrata" in result.stderr


def test_shims_end_to_end():
    out = lab_ok("bench", "shims", "--rounds", "5", "--allocators", "glibc", "--shims", "profile").stdout
    assert "## Lab shim overhead" in out
    assert "| glibc | plain | " in out and "| glibc | profile | " in out and "| glibc | trace |" not in out


# ---- the pieces -------------------------------------------------------------

def test_checksums_that_differ_between_allocators_stop_the_benchmark():
    runs = common.Measurements()
    runs.add(0, "churn", "glibc", {"checksum": "1"})
    runs.add(0, "churn", "mimalloc", {"checksum": "1"})
    common.check_same(runs, "checksum", "checksums differ")
    runs.add(1, "churn", "mimalloc", {"checksum": "2"})
    with pytest.raises(ProgramFailed, match="churn: checksums differ"):
        common.check_same(runs, "checksum", "checksums differ")


def test_ratios_are_paired_within_a_round():
    runs = common.Measurements()
    for rnd, (a, b) in enumerate([(2.0, 1.0), (9.0, 3.0), (4.0, 4.0)]):
        runs.add(rnd, "w", "a", {"t": a})
        runs.add(rnd, "w", "b", {"t": b})
    ratio = runs.paired("w", "a", "b", "t")
    assert (ratio.median, ratio.low, ratio.high, ratio.n) == (2.0, 1.0, 3.0, 3)
    assert runs.median("w", "a", "t") == 4.0


def test_rounds_interleave_every_contender_once():
    orders = [order for _, order in common.shuffled_rounds(5, ["a", "b", "c"], seed=1)]
    assert all(sorted(order) == ["a", "b", "c"] for order in orders) and len(orders) == 5
    assert [order for _, order in common.rotated_rounds(3, ["a", "b", "c"])] == [
        ["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]


def test_markdown_table():
    assert common.table(["x", "y"], [[1, 2]]) == ["| x | y |", "|---|---:|", "| 1 | 2 |"]


def test_rounds_below_five_are_refused_unless_quick():
    with pytest.raises(LabError, match="--rounds 4: at least 5"):
        common.check_rounds(4)
    common.check_rounds(1, quick_allows_fewer=True, quick=True)
