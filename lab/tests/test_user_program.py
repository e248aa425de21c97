"""Any program through the lab (issue 31): `strata-lab evaluate -- CMD` and [[program]] tables on programs
outside the catalogue (a tiny C program compiled here), the report's first screen, the config's errors, and a
real program whose package is missing reading "not measured" instead of stopping the evaluation."""
import csv
import json
import subprocess

import pytest

from conftest import lab
from strata_lab.evaluation import configuration
from strata_lab import workloads
from strata_lab.evaluation.plan import plan

# keep: allocates small objects it never frees (they die together at exit: region-shaped);
# churn: allocates many times its peak in small objects, each freed one by one (reap-shaped).
PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    long n = atol(argv[2]); unsigned long sum = 0; enum { WINDOW = 256 };
    char *window[WINDOW] = {0};
    for (long i = 0; i < n; ++i) {
        size_t size = 16 + (i * 7919) % 48;
        char *p = malloc(size);
        memset(p, (int)i, size);
        sum += (unsigned char)p[size - 1];
        if (argv[1][0] == 'c') { free(window[i % WINDOW]); window[i % WINDOW] = p; }
    }
    printf("%lu\n", sum);
    return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    directory = tmp_path_factory.mktemp("prog")
    (directory / "prog.c").write_text(PROGRAM)
    subprocess.run(["cc", "-O1", "-o", str(directory / "prog"), str(directory / "prog.c")], check=True)
    return directory / "prog"


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_evaluate_cmd_answers_the_four_questions_first(program, tmp_path):
    out = tmp_path / "out"
    result = lab("evaluate", "-o", out, "--name", "keeper", "--", program, "keep", "300000", timeout=600)
    assert result.returncode == 0, result.stderr
    runs = rows(out / "runs.csv")
    cells = {(r["allocator"], r["preset"]) for r in runs if r["status"] == "ok" and r["workload"] == "keeper"}
    assert {("glibc", "Adv0"), ("mimalloc", "Adv0"), ("jemalloc", "Adv0"), ("strata", "Adv0"),
            ("glibc", "Adv3"), ("mimalloc", "Adv3")} <= cells
    assert all(r["status"] == "ok" for r in runs), [r["exit_status"] for r in runs if r["status"] != "ok"]
    assert any(float(r["fragmentation"]) >= 1.0 for r in rows(out / "memory.csv") if r["status"] == "ok")
    md = (out / "report.md").read_text()
    first = md.index("## Your program: keeper")
    assert first < md.index("## Claims")            # the first screen
    screen = md[first:md.index("## Claims")]
    for question in ("**Fastest**:", "**Leanest**:", "**Under Adv3**", "**Fragmentation**", "**Region or reap**"):
        assert question in screen, question
    assert "95% CI" in screen and "Adv3/Adv0" in screen
    assert "a region could pay" in screen and "0% freed" in screen
    assert "keep 300000" in (out / "program.toml").read_text()   # the config it ran, kept with the results


def test_program_tables_in_a_config_and_reap_advice(program, tmp_path):
    config = tmp_path / "mine.toml"
    config.write_text(f"""
[evaluation]
runs = 5
memory_sections = ["user-program"]
memory_runs = 2
[[program]]
name = "churner"
argv = ["{program}", "churn", "400000"]
checksum = "stdout"
[[experiment]]
section = "user-program"
workloads = ["churner"]
allocators = ["glibc", "mimalloc"]
modes = ["naive"]
presets = ["Adv0"]
""")
    out = tmp_path / "out"
    result = lab("evaluate", "--config", config, "-o", out, timeout=600)
    assert result.returncode == 0, result.stderr
    md = (out / "report.md").read_text()
    screen = md[md.index("## Your program: churner"):md.index("## Claims")]
    assert "a reap could pay" in screen and "100% freed" in screen
    assert "**Under Adv3** (a heap fragmented as by a long-running program, 2026 Table 3): not run." in screen
    checksums = {r["checksum"] for r in rows(out / "runs.csv")}
    assert len(checksums) == 1 and checksums != {"0" * 16}    # its output, hashed, the same in every run


@pytest.mark.parametrize("text,message", [
    ('[[program]]\nname = "p"\n', "program[0].argv: expected a non-empty list"),
    ('[[program]]\nname = "sqlite"\nargv = ["true"]\n', "'sqlite' is already a workload's"),
    ('[[program]]\nname = "p"\nargv = ["true"]\nchecksum = "md5"\n', "program[0].checksum: 'md5'"),
    ('[[program]]\nname = "p"\nargv = ["true"]\nstdin = "x"\n', "program[0].stdin: unknown field"),
    ('[[program]]\nname = "a b"\nargv = ["true"]\n', "program[0].name: expected a name"),
])
def test_bad_program_tables_name_the_field(text, message):
    with pytest.raises(Exception) as error:
        configuration.parse(text + '[[experiment]]\nsection = "user-program"\nworkloads = ["sqlite"]\n'
                         'allocators = ["glibc"]\nmodes = ["naive"]\n', "t.toml", list(workloads.registry()))
    assert message in str(error.value)


@pytest.mark.parametrize("args,message", [
    (["--config", "lab/configs/smoke.toml", "--", "true"], "give a config or a program"),
    (["--", "/no/such/program"], "/no/such/program: no such program"),
    (["--name", "x"], "--name goes with a program"),
])
def test_bad_evaluate_commands_are_errors(args, message, tmp_path):
    result = lab("evaluate", "-o", tmp_path / "out", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_a_real_program_that_cannot_run_is_not_measured_and_the_rest_runs(tmp_path):
    directory = tmp_path / "w"
    for name, argv in (("missing", ["strata-no-such-binary", "{input}"]), ("present", ["true"])):
        (directory / name).mkdir(parents=True)
        (directory / name / "workload.json").write_text(json.dumps({
            "name": name, "imitates": "a test", "paper": "none", "kind": "program", "modes": ["naive"],
            "default_scale": 1, "test": {"scale": 1, "seed": 1},
            "program": {"runner": "debian", "package": f"strata-{name}-pkg", "argv": argv,
                        "why_missing": "a test's reason"}}))
    registry = workloads.registry(directory)
    config = configuration.parse('[[experiment]]\nsection = "real-programs"\nworkloads = ["missing", "present"]\n'
                              'allocators = ["glibc"]\nmodes = ["naive"]\n', "t.toml", list(registry))
    p = plan(config, registry)
    assert list(p.not_measured) == ["missing"]
    assert "strata-no-such-binary is not installed (Debian package strata-missing-pkg" in p.not_measured["missing"]
    assert "a test's reason" in p.not_measured["missing"]
    assert {c.workload for c in p.cells} == {"present"}
