"""`strata-lab profile`: run a program under libstrata-profile.so and keep
its profile; loading and checking profiles for the other commands."""
import json
import tempfile
from pathlib import Path

from . import paths, runner
from .errors import LabError

# Integer fields every profile has (docs/lab.md, "Profile JSON").
COUNT_FIELDS = ["cutoff", "total_objects", "total_bytes", "peak_live_objects", "peak_live_bytes",
                "realloc_calls", "free_calls", "live_objects_at_exit", "live_bytes_at_exit",
                "large_objects", "large_bytes", "unknown_frees", "untracked_objects"]


def _read_json(path: Path, what: str) -> dict:
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise LabError(f"{path}: no such {what} file") from None
    except IsADirectoryError:
        raise LabError(f"{path}: is a directory, not a {what} file") from None
    except PermissionError:
        raise LabError(f"{path}: {what} file is not readable (permission denied)") from None
    except UnicodeDecodeError:
        raise LabError(f"{path}: not a {what} (not text)") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise LabError(f"{path}: malformed {what}: not valid JSON ({error.msg} at line {error.lineno}, "
                       f"column {error.colno})") from None
    if not isinstance(data, dict):
        raise LabError(f"{path}: malformed {what}: expected a JSON object")
    return data


def load(path) -> dict:
    """A validated profile; LabError naming the file and the problem otherwise."""
    path = Path(path)
    data = _read_json(path, "profile")
    for field in COUNT_FIELDS:
        value = data.get(field)
        if value is None:
            raise LabError(f"{path}: malformed profile: missing field '{field}'")
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise LabError(f"{path}: malformed profile: field '{field}' must be a non-negative integer")
    histogram = data.get("size_histogram")
    if not isinstance(histogram, dict):
        raise LabError(f"{path}: malformed profile: missing object 'size_histogram'")
    previous = -1
    for key, count in histogram.items():
        if not key.isdigit() or not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise LabError(f"{path}: malformed profile: size_histogram entry {key!r}: {count!r} "
                           "is not \"size\": count")
        if int(key) <= previous:
            raise LabError(f"{path}: malformed profile: size_histogram sizes must ascend ({key} after {previous})")
        previous = int(key)
    return data


def collect(directory: Path, root_pid: int, output: Path, suffix: str) -> list:
    """Moves the root process's file to `output` and each child's to
    <output stem>.<pid><output suffix> beside it. Returns the children's paths."""
    children = []
    for produced in sorted(directory.glob(f"*{suffix}")):
        pid = int(produced.name.split(".")[1])
        if pid == root_pid:
            produced.replace(output)
        else:
            target = output.with_name(f"{output.stem}.{pid}{output.suffix}")
            produced.replace(target)
            children.append(target)
    return children


def children_summary(children: list) -> str:
    """One line for any number of child processes (a shell wrapper can start
    dozens): how many, and the files, named by their shared stem and pids."""
    first = Path(children[0])
    if len(children) == 1:
        return f"1 child process profiled: {first}"
    pids = [Path(c).name[len(first.name.split(".")[0]) + 1:].split(".")[0] for c in children]
    return (f"{len(children)} child processes profiled: {first.parent}/{first.name.split('.')[0]}.<pid>"
            f"{first.suffix} for pid {', '.join(pids)}")


def table3(profile: dict) -> str:
    """The 2002 paper's Table 3 columns for one program."""
    peak = profile["peak_live_bytes"]
    ratio = profile["total_bytes"] / peak if peak else 0.0
    return (f"total objects {profile['total_objects']:,}  max objects in use {profile['peak_live_objects']:,}  "
            f"average size {profile['average_size']:.1f} B  total memory {profile['total_bytes']:,} B  "
            f"max in use {peak:,} B  total/max {ratio:.1f}  realloc calls {profile['realloc_calls']:,}")


def command(args) -> int:
    if args.cutoff is not None and not 1 <= args.cutoff <= 1 << 24:
        raise LabError(f"--cutoff {args.cutoff}: expected 1..16777216")
    output = Path(args.output)
    shim = paths.shim("profile")
    preload = [str(shim)] + args.allocator.preload()
    with tempfile.TemporaryDirectory(prefix="strata-profile-") as tmp:
        variables = {"STRATA_LAB_PROFILE_OUT": f"{tmp}/profile.%p.json"}
        if args.cutoff is not None:
            variables["STRATA_LAB_PROFILE_CUTOFF"] = args.cutoff
        result = runner.run(args.command, preload, variables)
        produced = Path(tmp) / f"profile.{result.pid}.json"
        if not produced.exists():
            result.fail_if_not_ok("no profile was written")
            raise LabError("the program exited but wrote no profile (was it killed, or statically linked?)")
        children = collect(Path(tmp), result.pid, output, ".json")
    for path in [output] + children:
        data = json.loads(path.read_text())
        data["command"] = list(args.command)
        data["allocator"] = args.allocator.name
        if path == output:
            data["exit_status"] = result.status_json()
        path.write_text(json.dumps(data, indent=2) + "\n")
    profile = load(output)
    print(f"strata-lab profile: {output}: {table3(profile)}")
    if children:
        print(f"strata-lab profile: {children_summary(children)}")
    result.fail_if_not_ok(f"the profile in {output} covers the run up to that exit")
    return 0
