"""The malloc benchmark programs under each preloaded contender of
`strata-lab bench malloc` (the allocator registry's libraries): tiny sizes,
every byte of every object checked (--verify), and malloc must come from the
preloaded library (--expect-malloc-from). Until issue 17 these were CTest
tests with the libraries' paths spelled in bench/malloc/CMakeLists.txt."""
import pytest

from strata_lab import allocators
from strata_lab.bench import common, malloc, malloc_programs
from strata_lab.errors import LabError

# Built by `make peers`, not by make setup: left out when they are not there.
OPTIONAL = {"mimalloc3", "snmalloc"}
# One workload per program, at its callgrind sizes (the small ones), plus the
# other schedules of threads: stress2 (stress at 2 threads, the core count),
# cachethrash (no handoff from main) and sh8 (survivors freed by any thread).
OTHER_SCHEDULES = {"stress2", "cachethrash", "sh8"}
WORKLOADS = {}
for workload, (_, program, _, _, callgrind_args) in malloc.WORKLOADS.items():
    if program not in {p for p, _ in WORKLOADS.values()} or workload in OTHER_SCHEDULES:
        WORKLOADS[workload] = (program, callgrind_args)


def test_issue_20_patterns_are_covered():
    assert {"stress2", "prodcons", "cachescratch", "barnes", "cachethrash", "sh6", "sh8"} <= set(WORKLOADS)
    assert WORKLOADS["stress2"] == ("stress", malloc.WORKLOADS["stress2"][4])


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
@pytest.mark.parametrize("contender", [c for c in malloc.CONTENDERS if c != "glibc"])
def test_program_verifies_under_each_contender(contender, workload):
    program, args = WORKLOADS[workload]
    try:
        allocator = allocators.resolve(malloc.REGISTRY_NAME.get(contender, contender))
    except LabError as error:
        if contender in OPTIONAL:
            pytest.skip(str(error))
        raise
    result = common.run([malloc.program(program), "--verify", *args,
                         "--expect-malloc-from", allocator.malloc_from()], allocator.preload())
    assert f" malloc_from={allocator.library}" in result.stdout, result.stdout


def test_time_table_pairs_cpu_time_with_the_reference():
    """Against mimalloc3 the table has its own CPU column: on a loaded machine
    CPU time is the steadier figure for the threaded patterns of issue 20."""
    runs = common.Measurements()
    for rnd, (mine, ref) in enumerate([(3.0, 1.0), (4.0, 2.0)]):
        for name, cpu in (("libstrata", mine), ("mimalloc3", ref)):
            runs.add(rnd, "prodcons", name, {"elapsed_s": 1.0, "cpu_s": cpu, "rss_peak_bytes": 2**20,
                                             "peak_live_bytes": 2**19, "rss_start_bytes": 0, "ops": 10})
    lines = malloc.time_memory_table(runs, "prodcons", ["libstrata", "mimalloc3"], "mimalloc3")
    header = next(line for line in lines if line.startswith("| allocator"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    row = next(line for line in lines if line.startswith("| libstrata"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[columns.index("CPU / mimalloc3")] == "2.50"  # median of 3.0 and 2.0
    assert cells[columns.index("time / mimalloc3")] == "1.00"


def _libstrata():
    return allocators.resolve(malloc.REGISTRY_NAME["libstrata"])


@pytest.fixture(scope="module")
def git_source(tmp_path_factory):
    return malloc_programs.clone_source(str(tmp_path_factory.mktemp("git-source")))


@pytest.mark.parametrize("name", malloc_programs.DEFAULT_PROGRAMS)
def test_real_program_prints_the_same_under_libstrata_as_under_glibc(name, git_source, tmp_path):
    """Each job of the real-program suite runs (its --quick size) and its
    output does not depend on the allocator: what the driver checks."""
    glibc = allocators.resolve("glibc")
    digests = []
    for allocator in (glibc, _libstrata()):
        scratch = tmp_path / allocator.name
        scratch.mkdir()
        run = malloc_programs.run_program_once(name, allocator, str(scratch), git_source, quick=True)
        assert run["rss_peak_bytes"] > 2**20 and run["elapsed_s"] > 0
        digests.append(run["output"])
    assert digests[0] == digests[1]


def test_programs_table_gives_paired_ratios_to_glibc_and_their_geomean():
    runs = common.Measurements()
    for rnd, (glibc_s, mine_s) in enumerate([(2.0, 1.0), (2.0, 3.0), (2.0, 1.5)]):
        for prog, factor in (("lua", 1.0), ("perl", 4.0)):
            runs.add(rnd, prog, "glibc", {"elapsed_s": glibc_s, "rss_peak_bytes": 2**20})
            runs.add(rnd, prog, "libstrata", {"elapsed_s": mine_s * factor, "rss_peak_bytes": 2**19})

    class Args:
        programs, contenders, reference, rounds = ["lua", "perl"], ["glibc", "libstrata"], None, 3
    lines = malloc.programs_table(Args, runs)
    time_rows = lines[lines.index("#### time"):lines.index("#### peak RSS")]
    assert any(line.startswith("| lua | 2.00 s | 0.75 [0.50-1.50] |") for line in time_rows)  # per-round ratios
    assert any(line.startswith("| perl | 2.00 s | 3.00 [2.00-6.00] |") for line in time_rows)
    assert any(line.startswith("| geometric mean / glibc |  | **1.50** |") for line in time_rows)
    assert "| geometric mean / glibc |  | **0.50** |" in lines


def test_standing_table_gives_libstrata_against_the_reference_and_glibc_per_part():
    runs, program_runs = common.Measurements(), common.Measurements()
    for rnd in range(3):
        for name, t, m in (("glibc", 4.0, 8.0), ("mimalloc3", 2.0, 16.0), ("libstrata", 1.0, 4.0)):
            runs.add(rnd, "churn", name, {"elapsed_s": t, "rss_peak_bytes": m})
            program_runs.add(rnd, "lua", name, {"elapsed_s": t * 2, "rss_peak_bytes": m})

    class Args:
        reference, contenders, workloads, programs = "mimalloc3", ["glibc", "mimalloc3", "libstrata"], ["churn"], ["lua"]
    lines = malloc.standing_table(Args, runs, program_runs)
    assert "|  | time / mimalloc3 | peak RSS / mimalloc3 | time / glibc | peak RSS / glibc |" in lines
    assert "| churn | 0.50 | 0.25 | 0.25 | 0.50 |" in lines
    assert "| **geometric mean, real programs** | **0.50** | **0.25** | **0.25** | **0.50** |" in lines
