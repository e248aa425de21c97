"""The CLI's `strata-lab evaluate` and `strata-lab report`."""
import importlib.util
import sys
from pathlib import Path

from .. import evalconfig, paths, workloads
from ..errors import LabError
from .folder import point_latest, results_folder
from .run import evaluate

DEFAULT_CONFIG = paths.REPO_ROOT / "lab" / "configs" / "default.toml"


def command(args) -> int:
    # The report needs matplotlib: check now, import at the end. Importing it
    # here would add ~45 MiB to this process, which every run's ru_maxrss counts.
    if importlib.util.find_spec("matplotlib") is None or importlib.util.find_spec("scipy") is None:
        raise LabError("the report needs matplotlib and scipy: run `make setup` (lab/pyproject.toml lists them)")
    registry = workloads.registry()
    config = evalconfig.load(args.config or DEFAULT_CONFIG, list(registry))
    folder = results_folder(args.output)
    if folder.exists() and not folder.is_dir():
        raise LabError(f"-o {folder}: exists and is not a folder")
    print(f"strata-lab evaluate: {config.path} -> {folder}", file=sys.stderr)
    meta = evaluate(config, registry, folder, cachegrind=args.cachegrind)
    point_latest(folder)
    from .. import report
    written = report.render(folder)
    state = "PARTIAL (interrupted) " if meta["partial"] else ""
    print(f"strata-lab evaluate: {state}report: {written['html']} (and {written['md'].name}); "
          f"{meta['completed']['runs']} runs in {meta['duration_seconds']:.0f} s")
    return 130 if meta["interrupted"] else 0


def report_command(args) -> int:
    from .. import report
    folder = Path(args.results_dir)
    if not (folder / "meta.json").is_file():
        raise LabError(f"{folder}: not an evaluation results folder (no meta.json)")
    written = report.render(folder)
    print(f"strata-lab report: {written['html']} (and {written['md'].name})")
    return 0
