"""Every claim about single-threaded programs' time pairs their CPU time (program_cpu_seconds), which a busy
machine's preemptions leave out; results without it are judged on wall time; a multi-threaded program (CPU time
above wall time) keeps wall time. One helper decides for every section (report/timing.py)."""
import pytest

from strata_lab import report
from strata_lab.claims import HELD, NOT_HELD
from strata_lab.report import Results
from strata_lab.report.timing import CPU_TIME, WALL_TIME, Timing
from synthetic import SCALE, Synthetic
from test_claims_verdicts import SCENARIOS, _correlation

# Every claim on the workloads' time, by section (each judged from timed runs of single-threaded programs).
TIME_CLAIMS = [
    "per-class.boxed-sim.mimalloc-gain", "per-class.boxed-sim.naive-mimalloc-beats-custom-glibc",
    "per-class.boxed-sim.no-protection", "per-class.freelist16.glibc", "per-class.freelist16.jemalloc",
    "per-class.freelist16.mimalloc", "per-class.freelist-mix.mimalloc-gain",
    "regions.gap-best", "regions.closed-gap",
    "resilience.regions-unaffected", "resilience.naive-slows-mimalloc", "resilience.glibc-more-affected",
    "resilience.custom-slows-less",
    "occupancy.time-rises",
    "real-programs.pools-gain-little", "real-programs.clang-partial-resistance", "real-programs.mimalloc-beats-glibc",
    "reaps.within-10", "reaps.emulation-close", "reaps.faster-than-emulation", "reaps.regions-faster",
    "reaps.obstack-faster", "reaps.xalloc-faster",
    "general-purpose.vam-faster", "general-purpose.mimalloc-best",
    "heap-layers.kingsley-programs-time", "heap-layers.lea-programs-time",
    "vam-variants.header-time", "vam-variants.header-parser", "vam-variants.coarse-time",
    "hardening.hardened-cost", "hardening.hardened-cheaper",
]
# bench/layers' programs print their loop's CPU time (cpu_seconds) beside its steady-clock seconds.
BENCH_CLAIMS = ["heap-layers.kingsley-layers", "heap-layers.lea-layers", "heap-layers.xalloc-layers",
                "heap-layers.obstack-layers"]


def _claims(folder) -> dict:
    return {c.key: c for c in report.claims_of(folder)}


def _disagreeing(key: str) -> Synthetic:
    """CPU time says the claim holds; wall time (the runs preempted at random) says it does not. Every wall time
    is at least its CPU time, as in any single-threaded run (scaling them all keeps every ratio)."""
    cpu, wall = Synthetic(), Synthetic()
    SCENARIOS[key][HELD](cpu)
    SCENARIOS[key][NOT_HELD](wall)
    slower = max(c / w for k in cpu.times for c, w in zip(cpu.times[k], wall.times[k]))
    cpu.wall = {k: [w * slower for w in ws] for k, ws in wall.times.items()}
    return cpu


def test_the_claims_on_time_are_exactly_these(tmp_path):
    claims = _claims(Synthetic().write(tmp_path / "results"))
    assert sorted(k for k, c in claims.items() if "CPU time" in c.quantity) == sorted(
        TIME_CLAIMS + ["occupancy.misses-correlate"])
    for key in BENCH_CLAIMS:   # Synthetic's bench rows have wall time only: these say why they are on it
        assert "wall time" in claims[key].quantity and "steady clock" in claims[key].quantity


def _bench_disagreeing(key: str, cpu_time: bool = True) -> Synthetic:
    """bench/layers rows whose loop CPU time says the claim holds and whose seconds (preempted) say it does not."""
    held, not_held = Synthetic(), Synthetic()
    SCENARIOS[key][HELD](held)
    SCENARIOS[key][NOT_HELD](not_held)
    cpu = {(b["bench"], b["round"], b["contender"]): b["seconds"] for b in held.bench}
    s = Synthetic()
    s.bench = [dict(b, seconds=3 * b["seconds"], cpu_seconds=cpu[(b["bench"], b["round"], b["contender"])]
                    if cpu_time else None) for b in not_held.bench]
    return s


def _disagreeing_results(key: str, folder, cpu_time: bool = True):
    if key in BENCH_CLAIMS:
        return _bench_disagreeing(key, cpu_time).write(folder)
    return _disagreeing(key).write(folder, cpu_time=cpu_time)


@pytest.mark.parametrize("key", TIME_CLAIMS + BENCH_CLAIMS)
def test_cpu_time_decides_when_wall_time_disagrees(tmp_path, key):
    claim = _claims(_disagreeing_results(key, tmp_path / "results"))[key]
    assert claim.verdict == HELD, claim.interval_text()
    assert "CPU time" in claim.quantity


@pytest.mark.parametrize("key", TIME_CLAIMS + BENCH_CLAIMS)
def test_results_without_cpu_time_fall_back_to_wall_time(tmp_path, key):
    claim = _claims(_disagreeing_results(key, tmp_path / "results", cpu_time=False))[key]
    assert claim.verdict == NOT_HELD, claim.interval_text()
    assert "wall time" in claim.quantity and "CPU time" not in claim.quantity



def _sweep_with_wall_times_falling(cpu_time: bool, tmp_path):
    s = Synthetic()
    _correlation(1)(s)   # LL misses and CPU times rise along the sweep...
    for i, preset in enumerate(("M10-O0", "M10-O20", "M10-O40", "M10-O60")):
        s.wall[("parser", "naive", SCALE, "jemalloc", preset)] = [5.0 - 0.5 * i] * s.rounds   # ...wall times fall
    return _claims(s.write(tmp_path / "results", cpu_time=cpu_time))["occupancy.misses-correlate"]


def test_misses_correlate_with_cpu_time_and_without_it_with_wall_time(tmp_path):
    assert _sweep_with_wall_times_falling(True, tmp_path / "cpu").verdict == HELD
    assert _sweep_with_wall_times_falling(False, tmp_path / "wall").verdict == NOT_HELD


def test_a_multi_threaded_program_keeps_wall_time_and_its_claim_says_why(tmp_path):
    s = _disagreeing("vam-variants.header-parser")
    for key in s.times:
        if key[0] == "parser":   # two threads busy all along: CPU time twice the wall time
            s.times[key] = [2 * t for t in s.times[key]]
    claim = _claims(s.write(tmp_path / "results"))["vam-variants.header-parser"]
    assert claim.verdict == NOT_HELD, claim.interval_text()
    assert "wall time for parser: multi-threaded" in claim.quantity


# The helper itself.

def _run(workload, cpu, wall):
    return {"workload": workload, CPU_TIME: cpu, WALL_TIME: wall}


def test_timing_pairs_cpu_time_when_recorded_and_wall_time_otherwise():
    assert Timing([_run("a", 0.9, 1.0)]).metric("a") == CPU_TIME
    assert Timing([_run("a", None, 1.0)]).metric("a") == WALL_TIME
    assert Timing([_run("a", 0.9, 1.0)]).name == "CPU time"
    assert Timing([_run("a", None, 1.0)]).name == "wall time"


def test_timing_finds_multi_threaded_programs_by_cpu_time_above_wall_time():
    timing = Timing([_run("one", 1.0, 1.0), _run("one", 0.5, 1.0), _run("two", 1.9, 1.0), _run("two", 1.0, 1.0)])
    assert timing.threaded == {"two"}
    assert (timing.metric("one"), timing.metric("two")) == (CPU_TIME, WALL_TIME)
    assert timing.threaded_note(["one"]) == ""
    assert "wall time for two" in timing.threaded_note(["one", "two"])
    assert Timing([_run("one", 1.04, 1.0)]).threaded == set()   # within the clocks' granularity


def test_a_cells_time_is_its_cpu_time(tmp_path):
    s = Synthetic()
    key = ("cfrac", "naive", SCALE, "glibc", "Adv0")
    s.times[key], s.wall[key] = [0.5] * s.rounds, [2.0] * s.rounds
    assert Results(s.write(tmp_path / "cpu"), draw=False).cells[key].time.median == 0.5
    assert Results(s.write(tmp_path / "wall", cpu_time=False), draw=False).cells[key].time.median == 2.0
