"""One run of one cell: a profile, a timed run or a memory run, each
returning the row its CSV file records.

Every round samples what a single run would fix by accident (Mytkowicz et
al., ASPLOS 2009): the preconditioner draws its own seed per round, and the
environment grows by a per-round random number of bytes, which moves the
stack and everything the loader lays out after it. Both runs of a pair share
their round's seed and padding, so a ratio compares allocators, not layouts."""
import datetime
import random
import re
import time
from pathlib import Path
from typing import Optional

from .. import allocators, frag, precondition, workloads
from ..errors import LabError, ProgramFailed
from .plan import Cell

MAX_ENV_PADDING = 4096


def round_variation(seed: int, rnd: int) -> dict:
    """The round's preconditioning seed and environment padding (deterministic in the config's seed)."""
    rng = random.Random(seed * 1_000_003 + rnd)
    return {"precondition_seed": rng.randrange(1, 2 ** 31), "env_padding": rng.randrange(MAX_ENV_PADDING)}


def own_rss() -> Optional[int]:
    """This process's resident memory. Linux counts it in a child's ru_maxrss
    (the child starts as our copy and the high-water mark survives exec), so it
    is recorded beside each run's peak RSS."""
    try:
        match = re.search(r"^VmRSS:\s*(\d+) kB", Path("/proc/self/status").read_text(), re.M)
    except OSError:
        return None
    return int(match.group(1)) * 1024 if match else None


def profile(registry: dict, key: tuple, seed: int, folder: Path, timeout_s: float) -> dict:
    """Profiles (workload, mode, scale) on glibc into folder/profiles/."""
    name, mode, scale = key
    out = folder / "profiles" / f"{name}.{mode}.{scale}.json"
    start = time.monotonic()
    row = {"workload": name, "mode": mode, "scale": scale, "seed": seed}
    try:
        row.update(workloads.profile(registry[name], mode, scale, seed, out, timeout_s=timeout_s),
                   status="ok", path=str(out.relative_to(folder)))
    except (ProgramFailed, LabError) as error:
        row.update(status="failed", error=str(error)[:500])
    row["seconds"] = time.monotonic() - start
    return row


def _tail(text: Optional[str]) -> str:
    """The last 300 characters of a run's stderr, on one line (for the CSV)."""
    return (text or "").strip()[-300:].replace("\n", " | ")


def _identity(cell: Cell, registry: dict, seed: int, rnd: int, variation: dict) -> dict:
    return {"round": rnd, "workload": cell.workload, "kind": registry[cell.workload].kind, "mode": cell.mode,
            "scale": cell.scale, "seed": seed, "allocator": cell.allocator, "preset": cell.preset,
            "precondition_seed": variation["precondition_seed"]}


def timed(cell: Cell, registry: dict, seed: int, rnd: int, profile_path: Optional[str], timeout_s: float) -> dict:
    """One timed run of a cell in round rnd (no memory sampling: it would steal time from the program)."""
    variation = round_variation(seed, rnd)
    row = _identity(cell, registry, seed, rnd, variation)
    row.update(env_padding=variation["env_padding"], parent_rss_bytes=own_rss(),
               started=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    if cell.preset != "Adv0" and profile_path is None:
        return dict(row, status="failed", exit_status="not run: the workload's profile failed, and this preset "
                                                      "preconditions from it")
    result = workloads.run(registry[cell.workload], cell.mode, cell.scale, seed, cell.allocator, cell.preset,
                           profile_path, timeout_s, precondition_seed=variation["precondition_seed"],
                           env_padding=variation["env_padding"], sample_memory=False)
    result.pop("command", None)
    return dict(result, **row, stderr_tail=_tail(result.get("stderr_tail")))


def memory(cell: Cell, registry: dict, seed: int, rnd: int, profile_path: Optional[str], timeout_s: float) -> dict:
    """One memory run of a cell: peak pages in use and peak live bytes, both at the moments they happen, under
    the profiler's memory mode (frag.measure_memory); the same preconditioning as the timed runs of its round."""
    variation = round_variation(seed, rnd)
    row = _identity(cell, registry, seed, rnd, variation)
    if cell.preset != "Adv0" and profile_path is None:
        return dict(row, status="failed", exit_status="not run: no profile to precondition from")
    workload = registry[cell.workload]
    invocation = workload.invocation(cell.mode, cell.scale, seed)
    chosen = precondition.choose(cell.preset, None, None)
    variables = dict(invocation.env, **precondition.shim_variables(chosen, variation["precondition_seed"],
                                                                  profile_path))
    # measure_memory preloads the profiler and the preconditioner before the allocator
    measured = frag.measure_memory(invocation.argv, allocators.resolve(cell.allocator).preload(), variables,
                                   timeout_s, cwd=invocation.cwd)
    checksum = workloads.checksum_for(invocation, measured.get("stdout") or "")
    status = measured.get("status", "failed")
    if status == "ok" and checksum is None:
        status = "failed"
    return dict(row, status=status, exit_status=measured.get("exit_status", ""), checksum=checksum,
                peak_live_bytes=measured.get("peak_live_bytes"), peak_in_use_bytes=measured.get("peak_in_use_bytes"),
                fragmentation=measured.get("fragmentation"), samples=measured.get("samples"),
                wall_seconds=measured.get("wall_seconds"), stderr_tail=_tail(measured.get("stderr_tail")))
