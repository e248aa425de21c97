"""How a workload of kind "program" runs: a real program with its own
allocator (pyperformance on Debian's python3 with pymalloc, SQLite with its
lookaside), each runner validating its workload.json "program" object and
building the command line of one run; and the Invocation every workload
gives the lab. It knows a workload only by what a runner reads of it
(ProgramWorkload), so that workloads.py imports it and not the reverse."""
import functools
import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Protocol

from . import paths
from .errors import LabError

WORKLOADS_DIR = paths.REPO_ROOT / "workloads"
DEBIAN_PYTHON = "/usr/bin/python3"  # tools/apt/workloads.txt; not the lab's own interpreter


class ProgramWorkload(Protocol):
    """What a runner reads of a workloads.Workload of kind "program"."""
    name: str
    directory: Path
    program: dict  # workload.json's "program" object, validated by the runner's validate()


@dataclass(frozen=True)
class Invocation:
    argv: list
    env: dict            # added to the lab's environment (with the shims' LD_PRELOAD)
    cwd: Optional[str]
    # "line": the program prints "checksum <hex>" last; "stdout": the lab hashes all it prints (a
    # Debian program that prints its result, say clang's assembly, and no checksum line); "none": only
    # its exit status is checked (your own program, `strata-lab evaluate -- CMD`)
    checksum: str = "line"



# Real programs. Each runner validates its "program" object when the registry
# is read, and builds the command line of one run.

def _run_text(argv, env=None) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise LabError(f"cannot run {' '.join(argv)}: {error}") from None
    if done.returncode != 0:
        raise LabError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    return (done.stdout + done.stderr).strip()


def _debian_python() -> str:
    if not os.access(DEBIAN_PYTHON, os.X_OK):
        raise LabError(f"{DEBIAN_PYTHON} is missing: install Debian's python3 (tools/apt/workloads.txt)")
    return DEBIAN_PYTHON


@functools.lru_cache(maxsize=None)
def _python_version() -> str:
    return _run_text([_debian_python(), "--version"])


def _package_dir(name: str) -> Path:
    """Where the lab's environment has the package `name` (installed by make setup)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise LabError(f"the Python package {name} is not installed in the lab's environment "
                       "(run `make setup`: it is in lab/pyproject.toml)")
    return Path(list(spec.submodule_search_locations)[0])


def _python_path(name: str, packages: list) -> str:
    """A directory holding only `packages` (symlinks into the lab's venv), for
    PYTHONPATH: Debian's python3 then imports them and nothing else of the venv.
    The venv's packages used this way are pure Python or built for CPython 3.11."""
    directory = paths.build_dir() / "workloads" / "python-path" / name
    directory.mkdir(parents=True, exist_ok=True)
    for package in packages:
        target = _package_dir(package)
        link = directory / package
        if link.is_symlink() and Path(os.readlink(link)) == target:
            continue
        temporary = directory / f".{package}.{os.getpid()}"
        if temporary.is_symlink():
            temporary.unlink()
        temporary.symlink_to(target)
        os.replace(temporary, link)  # atomic: parallel runs see the old or the new link
    return str(directory)


def _python_env(pythonpath: str, seed: int, pymalloc: bool) -> dict:
    # PYTHONHASHSEED makes str hashing, and so set/dict layouts and allocation
    # patterns, repeat for a seed. PYTHONMALLOC is set in both modes so that a
    # PYTHONMALLOC in the caller's environment cannot leak in ("pymalloc" is
    # what a release build of CPython uses anyway).
    return {"PYTHONPATH": pythonpath, "PYTHONHASHSEED": str(seed % 2**32),
            "PYTHONMALLOC": "pymalloc" if pymalloc else "malloc"}


class _Pyperformance:
    """A pyperformance benchmark under Debian's python3, in this process, a fixed
    number of loops (workloads/python/pyperformance_harness.py). scale = loops."""
    harness = WORKLOADS_DIR / "python" / "pyperformance_harness.py"

    @staticmethod
    def validate(spec: dict, where: str) -> None:
        field(spec, "benchmark", str, where)
        for key in ("script", "result"):
            if key in spec:
                field(spec, key, str, where)
        args = spec.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise LabError(f"{where}: field 'program.args' must be a list of strings")

    def script(self, workload: ProgramWorkload) -> Path:
        benchmarks = _package_dir("pyperformance") / "data-files" / "benchmarks"
        script = benchmarks / f"bm_{workload.program.get('script', workload.program['benchmark'])}" / "run_benchmark.py"
        if not script.is_file():
            raise LabError(f"workload {workload.name}: {script} is missing (is pyperformance's version the one "
                           "lab/pyproject.toml pins?)")
        return script

    def invocation(self, workload: ProgramWorkload, mode: str, scale: int, seed: int) -> Invocation:
        spec = workload.program
        argv = [_debian_python(), "-s", str(self.harness), str(self.script(workload)), spec["benchmark"],
                str(scale), str(seed)]
        if "result" in spec:
            argv.append(spec["result"])
        if spec.get("args"):
            argv += ["--"] + spec["args"]
        return Invocation(argv, _python_env(_python_path("pyperformance", ["pyperf"]), seed, mode == "custom"),
                          None)

    def versions(self, workload: ProgramWorkload) -> dict:
        from importlib.metadata import version
        return {"python3": _python_version(), "pyperformance": version("pyperformance"),
                "pyperf": version("pyperf")}


class _Sqlite:
    """SQLite (apsw's bundled build, with lookaside) running a SQL script that
    workloads/sqlite/gen_sql.py generates from the seed and the scale; naive =
    no lookaside slots. The script is generated once into the build directory."""

    @staticmethod
    def validate(spec: dict, where: str) -> None:
        pass

    @staticmethod
    def _script(workload: ProgramWorkload, scale: int, seed: int) -> Path:
        return _generated(workload, "gen_sql.py", scale, seed, ".sql")

    def invocation(self, workload: ProgramWorkload, mode: str, scale: int, seed: int) -> Invocation:
        argv = [_debian_python(), "-s", str(workload.directory / "run_sql.py"),
                str(self._script(workload, scale, seed))] + (["--no-lookaside"] if mode == "naive" else [])
        return Invocation(argv, _python_env(_python_path("sqlite", ["apsw"]), seed, True), None)

    def versions(self, workload: ProgramWorkload) -> dict:
        env = dict(os.environ, **_python_env(_python_path("sqlite", ["apsw"]), 0, True))
        text = _run_text([_debian_python(), "-s", "-c",
                          "import apsw; print(apsw.sqlite_lib_version(), apsw.apsw_version())"], env)
        sqlite, apsw = text.split()
        return {"python3": _python_version(), "sqlite": sqlite, "apsw": apsw}


class _Command:
    """Any command: "argv" and optional "env" and "mode_env" ({mode: {VAR: value}}),
    with {dir}, {mode}, {scale}, {seed} and {python} replaced. Used by tests."""

    @staticmethod
    def validate(spec: dict, where: str) -> None:
        argv = spec.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise LabError(f"{where}: field 'program.argv' must be a non-empty list of strings")
        for key in ("env", "mode_env"):
            if not isinstance(spec.get(key, {}), dict):
                raise LabError(f"{where}: field 'program.{key}' must be an object")

    def invocation(self, workload: ProgramWorkload, mode: str, scale: int, seed: int) -> Invocation:
        values = {"dir": str(workload.directory), "mode": mode, "scale": str(scale), "seed": str(seed),
                  "python": sys.executable}

        def fill(text):
            for key, value in values.items():
                text = text.replace("{" + key + "}", value)
            return text
        env = {k: fill(str(v)) for k, v in workload.program.get("env", {}).items()}
        env.update({k: fill(str(v)) for k, v in workload.program.get("mode_env", {}).get(mode, {}).items()})
        return Invocation([fill(a) for a in workload.program["argv"]], env, None,
                          workload.program.get("checksum", "line"))

    def versions(self, workload: ProgramWorkload) -> dict:
        return {}


def _generated(workload: ProgramWorkload, generator_name: str, scale: int, seed: int, suffix: str) -> Path:
    """The input that <workload dir>/<generator_name> writes for a scale and seed (its generate(scale, seed,
    out)), generated once into the build directory and named by the generator's hash."""
    generator = workload.directory / generator_name
    if not generator.is_file():
        raise LabError(f"workload {workload.name}: {generator} is missing")
    source_hash = hashlib.sha256(generator.read_bytes()).hexdigest()[:12]
    inputs = paths.build_dir() / "workloads" / "inputs"
    target = inputs / f"{workload.name}-scale{scale}-seed{seed}-{source_hash}{suffix}"
    if not target.is_file():
        inputs.mkdir(parents=True, exist_ok=True)
        spec = importlib.util.spec_from_file_location(f"strata_wl_{workload.name}_gen", generator)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with tempfile.NamedTemporaryFile("w", dir=inputs, suffix=".tmp", delete=False) as out:
            module.generate(scale, seed, out)
        os.replace(out.name, target)  # atomic: a parallel run never reads half an input
    return target


class _Debian:
    """A program from a Debian package (tools/apt/programs.txt), run on an input the lab generates
    ("input": a generator in the workload's folder) or ships ("files": {name: path in the folder}):
    "package", "argv" (with {input}, {dir}, {scale}, {seed}, {build} replaced) and "mode_env"
    ({mode: {VAR: value}}: how a mode switches the program's own allocator off). "compile" = a C source in
    the folder built once against "pkg_config" libraries (a small program over a Debian library, GLib's
    GSlice). A missing program raises LabError naming the package, and "why_missing" when it says why."""

    @staticmethod
    def validate(spec: dict, where: str) -> None:
        field(spec, "package", str, where)
        argv = spec.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise LabError(f"{where}: field 'program.argv' must be a non-empty list of strings")
        if spec.get("checksum", "stdout") not in ("line", "stdout"):
            raise LabError(f"{where}: field 'program.checksum' must be \"line\" or \"stdout\"")
        for key in ("input", "compile", "why_missing", "input_suffix"):
            if key in spec:
                field(spec, key, str, where)
        if not isinstance(spec.get("mode_env", {}), dict):
            raise LabError(f"{where}: field 'program.mode_env' must be an object")
        if not isinstance(spec.get("pkg_config", []), list):
            raise LabError(f"{where}: field 'program.pkg_config' must be a list of strings")

    @staticmethod
    def _missing(workload: ProgramWorkload, what: str) -> LabError:
        why = workload.program.get("why_missing")
        return LabError(f"{what} is not installed (Debian package {workload.program['package']}: "
                        f"tools/apt/programs.txt, make setup)" + (f"; {why}" if why else ""))

    def _binary(self, workload: ProgramWorkload) -> Path:
        """The compiled program of "compile" (built once per source hash into the build directory)."""
        source = workload.directory / workload.program["compile"]
        digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
        binary = paths.build_dir() / "workloads" / "programs" / f"{workload.name}-{digest}"
        if binary.is_file():
            return binary
        libraries = workload.program.get("pkg_config", [])
        try:
            flags = shlex.split(_run_text(["pkg-config", "--cflags", "--libs"] + libraries)) if libraries else []
        except LabError:
            raise self._missing(workload, f"the development files of {', '.join(libraries)}") from None
        binary.parent.mkdir(parents=True, exist_ok=True)
        temporary = binary.with_suffix(f".{os.getpid()}.tmp")
        _run_text(["cc", "-O2", "-o", str(temporary), str(source)] + flags)
        os.replace(temporary, binary)
        return binary

    def invocation(self, workload: ProgramWorkload, mode: str, scale: int, seed: int) -> Invocation:
        spec = workload.program
        values = {"dir": str(workload.directory), "scale": str(scale), "seed": str(seed),
                  "build": str(paths.build_dir())}
        if "compile" in spec:
            values["program"] = str(self._binary(workload))
        if "input" in spec:
            values["input"] = str(_generated(workload, spec["input"], scale, seed, spec.get("input_suffix", "")))

        def fill(text):
            for key, value in values.items():
                text = text.replace("{" + key + "}", value)
            return text
        argv = [fill(a) for a in spec["argv"]]
        if shutil.which(argv[0]) is None:
            raise self._missing(workload, argv[0])
        env = {k: fill(str(v)) for k, v in spec.get("mode_env", {}).get(mode, {}).items()}
        return Invocation(argv, env, None, spec.get("checksum", "stdout"))

    def versions(self, workload: ProgramWorkload) -> dict:
        package = workload.program["package"]
        return {package: _run_text(["dpkg-query", "-W", "-f", "${Version}", package])}


PROGRAMS = {"pyperformance": _Pyperformance(), "sqlite": _Sqlite(), "debian": _Debian(), "command": _Command()}



def field(data: dict, key: str, kind, where: str):
    value = data.get(key)
    if value is None:
        raise LabError(f"{where}: missing field '{key}'")
    if not isinstance(value, kind) or isinstance(value, bool):
        raise LabError(f"{where}: field '{key}' must be {'a string' if kind is str else kind.__name__}")
    if kind is str and not value.strip():
        raise LabError(f"{where}: field '{key}' is empty")
    return value
