"""`strata-lab run`: a program on a chosen allocator after adversarial
preconditioning (2026 paper, Algorithm 3 and Table 3), timed without the
preconditioning."""
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import paths, profiling, runner
from .errors import LabError


@dataclass(frozen=True)
class Preset:
    name: str
    multiplier: float
    occupancy: float


# Table 3 of the 2026 paper. Adv0 preconditions nothing but is timed the same way.
TABLE3 = [Preset("Adv0", 0, 0), Preset("Adv1", 1, 0.33), Preset("Adv3", 3, 0.66), Preset("Adv10", 10, 0.8)]
# The 2026 paper's Fig. 3 design: a fixed multiplier of 10 and the occupancy swept (§3.2), named M10-O<percent>;
# Adv10 is the sweep's 80% point.
SWEEP = [Preset(f"M10-O{round(o * 100)}", 10, o) for o in (0.0, 0.2, 0.4, 0.6, 0.9)]
PRESETS = {p.name: p for p in TABLE3 + SWEEP}


def choose(preset: Optional[str], multiplier: Optional[float], occupancy: Optional[float]) -> Preset:
    """A preset, optionally with its multiplier/occupancy overridden, or custom values."""
    if preset is not None:
        known = {name.lower(): p for name, p in PRESETS.items()}
        key = preset.lower().replace("_", "")
        if key not in known:
            raise LabError(f"unknown preset '{preset}'; known: {', '.join(PRESETS)}")
        base = known[key]
    elif multiplier is None:
        raise LabError(f"give --preset ({', '.join(PRESETS)}) or --multiplier and --occupancy")
    else:
        base = Preset("custom", 0, 0)
    chosen = Preset(base.name if multiplier is None and occupancy is None else "custom",
                    base.multiplier if multiplier is None else multiplier,
                    base.occupancy if occupancy is None else occupancy)
    if chosen.multiplier < 0:
        raise LabError(f"--multiplier {chosen.multiplier}: must be >= 0")
    if not 0 <= chosen.occupancy <= 1:
        raise LabError(f"--occupancy {chosen.occupancy}: must be in [0, 1]")
    return chosen


def shim_variables(preset: Preset, seed: int, profile_path) -> dict:
    """The preconditioner's environment for one run (the report path aside);
    LabError for a bad seed, or a missing or bad profile, before anything runs."""
    if seed < 0:
        raise LabError(f"--seed {seed}: must be >= 0")
    variables = {"STRATA_LAB_PRECOND_MULTIPLIER": repr(float(preset.multiplier)),
                 "STRATA_LAB_PRECOND_OCCUPANCY": repr(float(preset.occupancy)),
                 "STRATA_LAB_PRECOND_SEED": seed}
    if preset.multiplier > 0:
        if profile_path is None:
            raise LabError(f"preset {preset.name} preconditions the heap from a profile: give --profile P "
                           "(make one with `strata-lab profile -o P -- CMD`)")
        profiling.load(profile_path)  # a bad profile stops us before the program starts
        variables["STRATA_LAB_PRECOND_PROFILE"] = str(Path(profile_path).resolve())
    elif profile_path is not None:
        profiling.load(profile_path)
    return variables


def command(args) -> int:
    preset = choose(args.preset, args.multiplier, args.occupancy)
    variables = shim_variables(preset, args.seed, args.profile)
    preload = [str(paths.shim("precondition"))] + args.allocator.preload()
    with tempfile.TemporaryDirectory(prefix="strata-run-") as tmp:
        variables["STRATA_LAB_PRECOND_REPORT"] = f"{tmp}/precondition.%p.json"
        result = runner.run(args.command, preload, variables)
        report_path = Path(tmp) / f"precondition.{result.pid}.json"
        report = json.loads(report_path.read_text()) if report_path.exists() else None
    result.fail_if_not_ok("no time is reported for a failed run")
    if report is None or report.get("exit_ns") is None:
        raise LabError("the program exited without the preconditioner recording its exit "
                       "(did it call _exit?); no time is reported")
    summary = {
        "allocator": args.allocator.name, "preset": preset.name, "multiplier": preset.multiplier,
        "occupancy": preset.occupancy, "seed": args.seed, "command": list(args.command),
        "program_seconds": report["program_ns"] / 1e9,
        "precondition_seconds": report["precondition_ns"] / 1e9,
        "peak_rss_bytes": runner.program_peak_rss(result, report),
        "precondition": {k: report[k] for k in ("allocated_objects", "allocated_bytes", "failed_allocations",
                                                "freed_objects", "kept_objects", "kept_bytes")},
        "exit_status": result.status_json(),
    }
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    pre = summary["precondition"]
    print(f"strata-lab run: {args.allocator.name} {preset.name} (multiplier {preset.multiplier:g}, "
          f"occupancy {preset.occupancy:g}, seed {args.seed}): preconditioning kept {pre['kept_objects']:,} of "
          f"{pre['allocated_objects']:,} objects ({pre['kept_bytes']:,} bytes) in "
          f"{summary['precondition_seconds'] * 1e3:.1f} ms; program {summary['program_seconds']:.6f} s; "
          f"peak RSS {summary['peak_rss_bytes'] / 2**20:.1f} MiB")
    return 0
