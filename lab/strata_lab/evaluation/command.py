"""The CLI's `strata-lab evaluate` and `strata-lab report`."""
import importlib.util
import shlex
import shutil
import sys
from pathlib import Path

from . import configuration
from .. import paths, workloads
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
    folder = results_folder(args.output)
    config = _config(args, registry, folder)
    registry.update(program_workloads(config))
    if folder.exists() and not folder.is_dir():
        raise LabError(f"-o {folder}: exists and is not a folder")
    print(f"strata-lab evaluate: {config.path} -> {folder}", file=sys.stderr)
    meta = evaluate(config, registry, folder, cachegrind=args.cachegrind)
    if args.drag and not meta["interrupted"]:
        _drag(config, folder)
    point_latest(folder)
    from .. import report
    written = report.render(folder)
    state = "PARTIAL (interrupted) " if meta["partial"] else ""
    print(f"strata-lab evaluate: {state}report: {written['html']} (and {written['md'].name}); "
          f"{meta['completed']['runs']} runs in {meta['duration_seconds']:.0f} s")
    return 130 if meta["interrupted"] else 0


def _config(args, registry: dict, folder: Path) -> configuration.Config:
    """The config file's, or for `evaluate -- CMD` one written into the results folder (user_config)."""
    program = list(args.program or [])
    program = program[1:] if program[:1] == ["--"] else program
    if not program:
        if args.name:
            raise LabError("--name goes with a program to evaluate: strata-lab evaluate --name NAME -- CMD ARGS...")
        return configuration.load(args.config or DEFAULT_CONFIG, list(registry))
    if args.config:
        raise LabError("give a config or a program (-- CMD ARGS...), not both: a config names its own programs "
                       "in [[program]] tables")
    name = args.name or Path(program[0]).name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "program.toml"
    path.write_text(configuration.user_config(program, name))
    return configuration.load(path, list(registry))


def program_workloads(config: configuration.Config) -> dict:
    """name -> Workload of each [[program]]: a real program in its one mode, naive (its allocations go to
    malloc), run as it is (scale and seed are not its to take), from the directory the lab runs in."""
    out = {}
    for p in config.programs:
        if shutil.which(p["argv"][0]) is None:
            raise LabError(f"program {p['name']}: {p['argv'][0]}: no such program (not found, or not executable)")
        spec = {"runner": "command", "argv": p["argv"], "env": p["env"], "checksum": p["checksum"]}
        out[p["name"]] = workloads.Workload(p["name"], f"your program: {shlex.join(p['argv'])}", "—", "program",
                                            ("naive",), 1, Path.cwd(), {"scale": 1, "seed": config.seed}, spec)
    return out


def _drag(config: configuration.Config, folder: Path) -> None:
    """--drag: each [[program]] once under strata-drag (docs/drag.md), into drag/<name>/ (the first screen reads
    it: how long its objects stay reachable but unused says whether a region would hold memory too long)."""
    from .. import drag
    for p in config.programs:
        print(f"strata-lab evaluate: drag of {p['name']} (under Valgrind: 20-50x slower)", file=sys.stderr)
        drag.measure(p["argv"], folder / "drag" / p["name"], quiet=True, timeout_s=config.timeout_s * 50)


def report_command(args) -> int:
    from .. import report
    folder = Path(args.results_dir)
    if not (folder / "meta.json").is_file():
        raise LabError(f"{folder}: not an evaluation results folder (no meta.json)")
    written = report.render(folder)
    print(f"strata-lab report: {written['html']} (and {written['md'].name})")
    return 0
