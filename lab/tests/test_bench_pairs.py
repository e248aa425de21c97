"""strata-lab bench pairs: instructions per malloc/free pair from callgrind's
call arcs into the preloaded library, differenced between two sizes."""
import pytest

from conftest import BUILD, lab, lab_ok
from strata_lab import valgrind
from strata_lab.bench import pairs
from strata_lab.errors import LabError

# A callgrind file in the shape valgrind writes with --dump-instr=yes: names
# compressed to "(id)" after their first use, the callee's object named by
# cob= only where it differs from the caller's, positions "instr line".
PROFILE = """\
version: 1
positions: instr line
events: Ir
ob=(1) /bench/churn
fl=(1) churn.c
fn=(1) main
0x10 5 7
cob=(2) /lib/libstrata.so
cfi=(2) override.cpp
cfn=(2) malloc
calls=10 0x100 1
0x11 6 200
cfn=(3) local_helper
calls=3 0x20 1
0x12 7 50
cob=(2)
cfn=(4) free
calls=9 0x200 1
0x13 8 180
ob=(2)
fl=(2)
fn=(2)
0x100 1 150
cob=(3) /lib/libc.so.6
cfn=(5) mmap
calls=1 0x300 1
0x101 2 50
fn=(4)
0x200 3 180
ob=(1)
fl=(1)
fn=(6) 0x0000000000001030
0x30 0 1
cob=(2)
cfn=(2)
calls=2 0x100 1
0x31 0 40
"""


def test_calls_into_sums_each_entry_point_called_from_outside_the_library(tmp_path):
    out = tmp_path / "callgrind.out"
    out.write_text(PROFILE)
    # main's call to its own helper and the library's own call to mmap are not the
    # program's calls into the library; the plt stub's are.
    assert valgrind.calls_into(out, "libstrata") == {"malloc": (12, 240), "free": (9, 180)}
    assert valgrind.calls_into(out, "libc.so") == {"mmap": (1, 50)}


def test_per_pair_differences_the_two_sizes():
    small = {"Ir": 1000, "allocations": 10, "frees": 10, "malloc_Ir": 400, "malloc_calls": 10, "free_Ir": 600}
    large = {"Ir": 2000, "allocations": 30, "frees": 28, "malloc_Ir": 800, "malloc_calls": 30, "free_Ir": 1200}
    assert pairs.per_pair(small, large) == {"pairs": 20, "pair": 50.0, "malloc": 20.0, "free": 600 / 18}
    with pytest.raises(LabError, match="more allocations"):
        pairs.per_pair(large, small)


def test_workload_argv_scales_one_option_and_keeps_the_others():
    argv = pairs.workload_argv("cachescratch", 300)
    assert argv[0] == str(BUILD / "bench/malloc/cachescratch")
    options = dict(zip(argv[1::2], argv[2::2]))
    assert options["--iterations"] == "300" and options["--repetitions"] == "10"
    assert pairs.workload_argv("churn", 7)[1:] == ["--ops", "7", "--window", "20000"]


def test_pairs_of_a_run_count_every_allocation_and_agree_across_runs():
    """cachescratch allocates exactly --iterations objects at one thread, so the
    pairs between n and 2n are n; callgrind counts the same library the same
    twice (as itself and as --baseline) but for libstrata's housekeeping on
    the clock (its idle-front scans, some thousand instructions each, run
    as often as the run's wall time allows, so a loaded machine adds a few):
    equal within 1%."""
    library = BUILD / "src/malloc/libstrata.so"
    out = lab_ok("bench", "pairs", "--workloads", "cachescratch", "--contenders", "libstrata",
                 "--reference", "libstrata", "--baseline", library, timeout=300).stdout
    rows = {line.split("|")[2].strip(): [c.strip() for c in line.strip("|").split("|")]
            for line in out.splitlines() if line.startswith("| cachescratch")}
    assert set(rows) == {"libstrata", "baseline"}
    assert rows["libstrata"][2] == f"{pairs.SCALED['cachescratch'][1]:,}"
    per_pair = float(rows["libstrata"][5].strip("*"))
    assert 10 < per_pair < 200, out
    assert abs(float(rows["baseline"][5].strip("*")) - per_pair) <= per_pair / 100 and rows["baseline"][6] == "1.00", out


def test_glibc_is_refused():
    result = lab("bench", "pairs", "--contenders", "glibc,libstrata", "--reference", "libstrata")
    assert result.returncode == 2 and "glibc is not preloaded" in result.stderr
