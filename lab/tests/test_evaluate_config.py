"""The evaluation's config parser (lab/strata_lab/evaluation/configuration.py): every error
names the offending field, and the shipped configs parse."""
from pathlib import Path

import pytest

from strata_lab.evaluation import configuration
from strata_lab import workloads
from strata_lab.errors import LabError

REPO = Path(__file__).resolve().parents[2]
WORKLOADS = ["boxed-sim", "router", "sqlite"]
ALLOCATORS = ["glibc", "jemalloc", "mimalloc", "strata", "kingsley", "lea"]

GOOD = """
[evaluation]
runs = 6
seed = 3
timeout_s = 30

[[experiment]]
section = "per-class"
workloads = ["boxed-sim"]
allocators = ["glibc", "mimalloc"]
modes = ["custom", "naive"]
presets = ["Adv0", "Adv3"]
scale = 0.5
scales = {boxed-sim = 7}

[[experiment]]
section = "regions"
workloads = ["router", "boxed-sim"]
allocators = ["glibc"]
modes = ["custom", "naive"]
scale = 0.25
runs = 8

[bench.zero-cost]
ops = 1000
rounds = 5
"""


def parse(text):
    return configuration.parse(text, "test.toml", WORKLOADS, ALLOCATORS)


def test_a_good_config_parses_with_its_values():
    config = parse(GOOD)
    assert (config.runs, config.seed, config.timeout_s) == (6, 3, 30.0)
    first, second = config.experiments
    assert first.section == "per-class" and first.allocators == ["glibc", "mimalloc"]
    assert first.presets == ["Adv0", "Adv3"]
    assert first.scale_of("boxed-sim", 160) == 7          # absolute override
    assert second.scale_of("router", 60) == 15            # 0.25 x default
    assert second.scale_of("boxed-sim", 2) == 1           # never below 1
    assert second.presets == ["Adv0"] and second.runs == 8 and first.runs == 6
    assert config.bench == {"zero-cost": {"ops": 1000, "rounds": 5}}
    assert config.sections() == ["per-class", "regions"]
    assert config.budget_s is None and config.max_rounds == 20 and config.memory_runs == 3   # defaults
    assert config.memory_sections == ["reaps", "general-purpose", "heap-layers"]


def replace(old, new):
    assert old in GOOD
    return GOOD.replace(old, new, 1)


@pytest.mark.parametrize("text, message", [
    ("[evaluation\nruns = 5", "malformed TOML"),
    (replace('workloads = ["boxed-sim"]', 'workloads = ["nope"]'),
     "experiment[0] (per-class).workloads[0]: unknown workload 'nope'"),
    (replace('allocators = ["glibc", "mimalloc"]', 'allocators = ["glibc", "hoard"]'),
     "experiment[0] (per-class).allocators[1]: unknown allocator 'hoard'"),
    (replace('modes = ["custom", "naive"]', 'modes = ["custom", "fast"]'),
     "experiment[0] (per-class).modes[1]: unknown mode 'fast'"),
    (replace('presets = ["Adv0", "Adv3"]', 'presets = ["Adv0", "Adv2"]'),
     "experiment[0] (per-class).presets[1]: unknown preset 'Adv2'"),
    (replace('section = "per-class"', 'section = "speed"'), "experiment[0].section: unknown section 'speed'"),
    (replace('section = "per-class"\n', ''), "experiment[0].section: missing"),
    (replace('workloads = ["boxed-sim"]\n', ''), "experiment[0] (per-class).workloads: missing"),
    (replace('runs = 6', 'runs = "six"'), "evaluation.runs: expected an integer, got str 'six'"),
    (replace('runs = 6', 'runs = 4'), "evaluation.runs: 4: at least 5 runs per cell"),
    (replace('runs = 8', 'runs = 2'), "experiment[1] (regions).runs: 2: at least 5"),
    (replace('scale = 0.5', 'scale = "big"'), "experiment[0].scale: expected an integer or a number"),
    (replace('scale = 0.5', 'scale = -1'), "experiment[0] (per-class).scale: -1: must be > 0"),
    (replace('scales = {boxed-sim = 7}', 'scales = {router = 7}'),
     "experiment[0] (per-class).scales.router: not one of this experiment's workloads"),
    (replace('scales = {boxed-sim = 7}', 'scales = {boxed-sim = 0}'),
     "experiment[0] (per-class).scales.boxed-sim: expected a positive integer"),
    (replace('modes = ["custom", "naive"]', 'modes = "custom"'), "experiment[0].modes: expected a list"),
    (replace('modes = ["custom", "naive"]', 'modes = []'), "experiment[0] (per-class).modes: empty list"),
    (replace('modes = ["custom", "naive"]', 'modes = ["custom", "custom"]'), "modes: a mode is listed twice"),
    (replace('seed = 3', 'colour = 3'), "evaluation.colour: unknown field"),
    (replace('scale = 0.5', 'scale = 0.5\nspeed = 1'), "experiment[0].speed: unknown field"),
    (replace('timeout_s = 30', 'timeout_s = 0'), "evaluation.timeout_s: 0: must be > 0"),
    (replace('seed = 3', 'seed = -1'), "evaluation.seed: -1: must be >= 0"),
    (replace('seed = 3', 'seed = true'), "evaluation.seed: expected an integer, got bool"),
    (replace('[bench.zero-cost]', '[bench.speedy]'), "bench.speedy: unknown benchmark"),
    (replace('ops = 1000', 'ops = 0'), "bench.zero-cost.ops: 0: must be >= 1"),
    (replace('ops = 1000', 'opz = 1000'), "bench.zero-cost.opz: unknown field"),
    (replace('rounds = 5', 'rounds = 3'), "bench.zero-cost.rounds: 3: at least 5"),
    (replace('[evaluation]', '[evaluatoin]'), "evaluatoin: unknown table"),
    (replace('seed = 3', 'cachegrind_sections = ["speed"]'),
     "evaluation.cachegrind_sections[0]: unknown section 'speed'"),
    (replace('seed = 3', 'cachegrind_scale = 2'), "evaluation.cachegrind_scale: expected a fraction in (0, 1], got 2"),
    (replace('seed = 3', 'cachegrind_options = ["--LL=512k"]'),
     "evaluation.cachegrind_options[0]: expected --I1=, --D1= or --LL=<size>,<associativity>,<line size>, "
     "got '--LL=512k'"),
    ("[evaluation]\nruns = 5\n", "nothing to run"),
    (replace('seed = 3', 'memory_sections = ["speed"]'), "evaluation.memory_sections[0]: unknown section 'speed'"),
    (replace('seed = 3', 'memory_runs = 0'), "evaluation.memory_runs: 0: must be >= 1"),
    (replace('seed = 3', 'budget_s = -5'), "evaluation.budget_s: -5: must be > 0 seconds"),
    (replace('seed = 3', 'max_rounds = 4'), "evaluation.max_rounds: 4: must be >= runs (6)"),
])
def test_every_error_names_the_field(text, message):
    with pytest.raises(LabError) as error:
        parse(text)
    assert message in str(error.value)
    assert "test.toml" in str(error.value)


def test_a_missing_config_file_is_named(tmp_path):
    with pytest.raises(LabError, match="no such config file"):
        configuration.load(tmp_path / "absent.toml", WORKLOADS, ALLOCATORS)


@pytest.mark.parametrize("name", ["smoke", "default", "full"])
def test_the_shipped_configs_parse_against_the_real_registry(name):
    config = configuration.load(REPO / "lab" / "configs" / f"{name}.toml", list(workloads.registry()))
    assert config.experiments
    assert all(e.runs >= 5 for e in config.experiments)


def test_the_cli_reports_a_bad_config_before_anything_runs(tmp_path):
    from conftest import lab
    bad = tmp_path / "bad.toml"
    bad.write_text(replace('workloads = ["boxed-sim"]', 'workloads = ["nope"]'))
    out = tmp_path / "results"
    result = lab("evaluate", "--config", bad, "-o", out)
    assert result.returncode == 2
    assert "workloads[0]: unknown workload 'nope'" in result.stderr
    assert not out.exists()  # nothing ran, nothing was written
