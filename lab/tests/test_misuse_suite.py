"""The misuse suite (tests/misuse, strata_lab.misuse_suite): each misuse program
is caught by an allocator known to catch it, each correct program runs clean
on every allocator, a program that does not misbehave is never counted as
caught, and the table and the report section render."""
import csv
import signal

import pytest

from conftest import REPO, lab, lab_ok
from strata_lab import allocators, misuse_suite, workloads
from strata_lab.evaluation import configuration
from strata_lab.errors import LabError
from strata_lab.report import Results, render
from strata_lab.report.sections import hardening as section
from synthetic import Synthetic, write_csv

# glibc's own checks, switched on: MALLOC_CHECK_=3 (libc_malloc_debug.so, libc6) puts a magic byte past each
# request and checks it on free; perturb with no tcache fills each freed object.
GLIBC_CHECK = {"LD_PRELOAD": "/lib/x86_64-linux-gnu/libc_malloc_debug.so.0", "MALLOC_CHECK_": "3"}
GLIBC_PERTURB = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0:glibc.malloc.perturb=165"}
# An allocator known to catch each misuse (run on this machine: glibc 2.36, scudo LLVM 14, snmalloc 0.7.6 checks).
KNOWN = {
    "double_delete": ("glibc", None), "double_free_after_realloc": ("scudo", None),
    "double_free_aligned": ("glibc", None), "double_free_delayed_large": ("scudo", None),
    "double_free_delayed_small": ("glibc", None), "double_free_large": ("scudo", None),
    "double_free_small": ("glibc", None), "free_global": ("glibc", None), "free_interior_large": ("glibc", None),
    "free_interior_small": ("glibc", None), "free_mmap": ("glibc", None),
    "free_sized_mismatch": ("snmalloc-checks", None),
    "free_stack": ("glibc", None), "free_unaligned": ("glibc", None), "free_wild": ("glibc", None),
    "overflow1_large": ("scudo", None), "overflow1_small": ("glibc", GLIBC_CHECK), "overflow8_large": ("scudo", None),
    "overflow8_small": ("snmalloc-checks", None), "read_after_free_large": ("glibc", None),
    "read_after_free_small": ("glibc", GLIBC_PERTURB), "realloc_freed": ("scudo", None),
    "realloc_interior": ("glibc", None), "realloc_stack": ("glibc", None), "sized_delete_mismatch": ("scudo", None),
    "usable_size_freed": ("scudo", None), "usable_size_interior": ("scudo", None),
    "write_after_free_large": ("glibc", None), "write_after_free_small": ("snmalloc-checks", None),
    "zero_size_write": ("glibc", GLIBC_CHECK),
    # Issue 33's categories (hardened_malloc's README lists them).
    "aligned_delete_wrong_alignment_large": ("snmalloc-checks", None),
    "aligned_sized_delete_large": ("scudo", None), "double_free_huge": ("glibc", None),
    "free_unreturned_small": ("glibc", None), "overflow64_large": ("glibc", None),
    "read_after_free_large_start": ("glibc", None), "write_after_free_first_word_small": ("mimalloc-secure", None),
    "write_after_free_unreused_small": ("snmalloc-checks", None),
    # No peer here answers malloc(0) with memory that cannot be read (hardened_malloc does).
    "zero_size_read": ("strata-hardened", None),
}
# Every allocator of the comparison must be there (make test builds the peers); strata-hardened when built.
# Not Debian's mimalloc 2.0.9: its aligned_alloc(256, 512) is misaligned (correct_aligned fails, rightly).
REQUIRED = ["glibc", "scudo", "mimalloc-secure", "snmalloc-checks", "strata", "jemalloc", "tcmalloc", "mimalloc3",
            "snmalloc", "kingsley", "lea"]
OPTIONAL = [name for name in ["strata-hardened"] if allocators.REGISTRY[name].where.find() is not None]


def program(name):
    return next(p for p in misuse_suite.programs() if p.name == name)


def test_the_suite_is_thirty_nine_misuses_and_eleven_correct_programs_all_built():
    misuse, correct = misuse_suite.programs("misuse"), misuse_suite.programs("correct")
    assert (len(misuse), len(correct)) == (39, 11)
    assert {p.name.split("_", 1)[1] for p in misuse} == set(KNOWN)
    assert all(p.path().is_file() and p.what for p in misuse + correct)


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_each_misuse_is_caught_by_an_allocator_known_to_catch_it(name):
    allocator, env = KNOWN[name]
    row = misuse_suite.run(program(f"misuse_{name}"), allocators.resolve(allocator), extra_env=env)
    assert row["outcome"] == misuse_suite.CAUGHT, row
    assert signal.Signals[row["signal"]] in misuse_suite.CAUGHT_SIGNALS and row["exit_status"].startswith("killed by")


@pytest.mark.parametrize("allocator", REQUIRED + OPTIONAL)
def test_each_correct_program_runs_clean(allocator):
    """No false alarm: also the allocators that check nothing must run a correct program to the end."""
    present = allocators.resolve(allocator)
    rows = [misuse_suite.run(p, present) for p in misuse_suite.programs("correct")]
    assert [r for r in rows if r["outcome"] != misuse_suite.CLEAN] == []


def test_a_program_that_does_not_misbehave_is_not_counted_as_caught():
    # A correct program run as if it were a misuse: it exits 0, so the misuse went unnoticed.
    quiet = misuse_suite.Program("correct_calloc", "misuse", "a program that does nothing wrong")
    row = misuse_suite.run(quiet, allocators.resolve("glibc"))
    assert row["outcome"] == misuse_suite.MISSED and row["exit_status"] == "exited with status 0"
    assert misuse_suite.tally([row])["glibc"][misuse_suite.CAUGHT] == 0
    # Only a stop by one of the listed signals is caught; other ends are not.
    assert misuse_suite.outcome("misuse", -signal.SIGKILL) == misuse_suite.FAILED
    assert misuse_suite.outcome("misuse", 1) == misuse_suite.FAILED
    assert misuse_suite.outcome("misuse", misuse_suite.NOT_APPLICABLE_EXIT) == misuse_suite.NOT_APPLICABLE
    assert misuse_suite.outcome("misuse", None, timed_out=True) == misuse_suite.TIMEOUT
    assert misuse_suite.outcome("correct", -signal.SIGABRT) == misuse_suite.FAILED
    assert misuse_suite.outcome("misuse", -signal.SIGSEGV) == misuse_suite.CAUGHT


def test_a_hanging_program_is_a_timeout_not_a_catch():
    row = misuse_suite.run(program("correct_exact_sizes"), allocators.resolve("glibc"), timeout_s=0.001)
    assert row["outcome"] == misuse_suite.TIMEOUT and row["signal"] == ""


def test_the_table_renders_and_a_missing_allocator_is_skipped_with_its_hint(tmp_path):
    result = lab_ok("misuse", "--alloc", "glibc", "--alloc", "mimalloc-secure",
                    env={"STRATA_LAB_PEERS_DIR": str(tmp_path)}, timeout=300)
    lines = result.stdout.splitlines()
    assert lines[0] == "| " + " | ".join(misuse_suite.SUMMARY_HEADER) + " |"
    glibc = next(line for line in lines if line.startswith("| glibc |")).split(" | ")
    caught, applicable = map(int, glibc[1].split("/"))
    assert applicable + int(glibc[2]) == 39 and 10 <= caught <= applicable and glibc[3] == "11/11 |"
    assert "| double_free_small | SIGABRT |" in result.stdout and "| calloc | clean |" in result.stdout
    assert "skipped: --alloc mimalloc-secure" in result.stderr and "make peers" in result.stderr


def test_no_allocator_at_all_is_an_error(tmp_path):
    result = lab("misuse", "--alloc", "snmalloc-checks", env={"STRATA_LAB_PEERS_DIR": str(tmp_path)})
    assert result.returncode == 2 and "no allocator to run the misuse suite on" in result.stderr


def test_an_unbuilt_suite_says_make_build(tmp_path, monkeypatch):
    monkeypatch.setenv("STRATA_LAB_BUILD_DIR", str(tmp_path))
    with pytest.raises(LabError, match=r"misuse suite is not built .* run `make build`"):
        misuse_suite.run_suite(["glibc"])


def test_the_smoke_and_default_configs_run_the_suite_on_their_hardening_allocators():
    for config_name in ("smoke", "default"):
        config = configuration.load(REPO / "lab" / "configs" / f"{config_name}.toml", list(workloads.registry()))
        experiment = next(e for e in config.experiments if e.section == "hardening")
        steps = misuse_suite.evaluation_steps(config, {"glibc": "", "strata": "/lib/libstrata.so"})
        assert {a for _, a in steps} == {"glibc", "strata"} <= set(experiment.allocators)
        assert len(steps) == 2 * 50  # 39 misuse programs, 11 correct ones
    assert misuse_suite.evaluation_steps(configuration.load(REPO / "lab" / "configs" / "smoke.toml",
                                                      list(workloads.registry())), {"jemalloc": ""}) == []


def _results_with_suite(tmp_path, strata_rows):
    """A synthetic results folder with a hardening experiment and real misuse rows (glibc's), strata's given."""
    s = Synthetic()
    for allocator in ("strata-hardened", "scudo"):
        s.set("cfrac", "naive", allocator, "Adv0", 1.1)
    s.meta_extra["experiments"] = [{"section": "hardening", "title": "", "workloads": ["cfrac"],
                                    "allocators": ["glibc", "strata", "strata-hardened", "scudo"],
                                    "modes": ["naive"], "presets": ["Adv0"], "scales": {"cfrac": 2}, "runs": 6,
                                    "cells": 4}]
    folder = s.write(tmp_path / "results")
    rows, _ = misuse_suite.run_suite(["glibc"])
    write_csv(folder / "misuse.csv", misuse_suite.FIELDS, rows + strata_rows(rows))
    return folder


def test_the_report_section_judges_the_claims(tmp_path):
    # strata catches nothing, except what glibc catches by a SIGSEGV: the claim names what it misses.
    def strata_rows(rows):
        return [dict(r, allocator="strata", outcome=r["outcome"] if r["signal"] == "SIGSEGV" or r["kind"] == "correct"
                     else misuse_suite.MISSED) for r in rows]
    folder = _results_with_suite(tmp_path, strata_rows)
    built = section.build(Results(folder, draw=False))
    verdicts = {c.key: c for c in built.claims}
    what_glibc_catches = verdicts["hardening.strata-catches-what-glibc-catches"]
    assert what_glibc_catches.verdict == "not held" and "double_free_small" in what_glibc_catches.note
    assert verdicts["hardening.no-false-alarm"].verdict == "held"
    assert verdicts["hardening.strata-hardened-detection"].verdict == "not measured"
    # strata-hardened at 1.1x strata: within 1.25x, and not faster than scudo at the same time (inconclusive or not).
    assert verdicts["hardening.hardened-cost"].verdict == "held"
    assert verdicts["hardening.hardened-cheaper"].verdict != "held"
    md = (render(folder)["md"]).read_text()
    assert "## Hardening: misuse caught against its cost" in md
    assert "| allocator | misuse caught | not applicable | correct programs clean |" in md


def test_the_suite_rows_are_what_the_evaluation_writes(tmp_path):
    with open(tmp_path / "misuse.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=misuse_suite.FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerow(misuse_suite.evaluation_row((program("misuse_double_free_small"), "glibc"), {"glibc": ""}, 60))
    with open(tmp_path / "misuse.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert (row["program"], row["allocator"], row["outcome"], row["signal"]) == \
        ("misuse_double_free_small", "glibc", "caught", "SIGABRT")
    assert "double free" in row["message"]


def test_debian_mimalloc_fails_the_aligned_program_for_its_own_bug():
    # The correct programs check real results: Debian's mimalloc 2.0.9 gets this one wrong (drop this test when an
    # upgrade fixes it; the table in docs/lab.md then changes too).
    row = misuse_suite.run(program("correct_aligned"), allocators.resolve("mimalloc"))
    assert row["outcome"] == misuse_suite.FAILED and row["message"] == "correct program: misaligned"
