"""The cachegrind run of a cell (cachegrind_sections, or every cell with
--cachegrind): simulated D1 and last-level misses and instructions, which
are deterministic, so once is enough. It runs at the config's
cachegrind_scale of the cell's scale, in the config's cache geometry."""
import re
import subprocess
import time
from pathlib import Path
from typing import Optional

from .. import allocators, paths, precondition, runner, valgrind
from .plan import Cell


def valgrind_run(cell: Cell, run_scale: int, options: list, workload, seed: int, profile_path: Optional[str],
                 folder: Path, timeout_s: float) -> dict:
    """The cachegrind run of a cell, at run_scale; the row is keyed by the cell (its scale is the cell's)."""
    tool = "cachegrind"
    row = {"workload": cell.workload, "mode": cell.mode, "scale": cell.scale, "run_scale": run_scale, "seed": seed,
           "allocator": cell.allocator, "preset": cell.preset, "tool": tool}
    invocation = workload.invocation(cell.mode, run_scale, seed)
    chosen = precondition.choose(cell.preset, None, None)
    variables = dict(invocation.env, **precondition.shim_variables(chosen, seed, profile_path))
    variables["STRATA_REAP_CHECK"] = "0"  # under Valgrind the reap would switch to its checked mode
    preload = [str(paths.shim("precondition"))] + allocators.resolve(cell.allocator).preload()
    out_dir = folder / "valgrind"
    out_dir.mkdir(exist_ok=True)
    out_file = out_dir / (re.sub(r"[^A-Za-z0-9_.-]", "_", f"{tool}.{cell.label()}") + ".out")
    argv = ["valgrind", f"--tool={tool}", f"--{tool}-out-file={out_file}", "--cache-sim=yes", *options,
            *invocation.argv]
    start = time.monotonic()
    try:
        done = subprocess.run(argv, env=runner.environment(preload, variables), capture_output=True, text=True,
                              timeout=timeout_s, cwd=invocation.cwd)
    except subprocess.TimeoutExpired:
        return dict(row, status="timeout", seconds=time.monotonic() - start)
    row["seconds"] = time.monotonic() - start
    if done.returncode != 0:
        return dict(row, status="failed" if done.returncode > 0 else "crashed",
                    error=done.stderr.strip()[-300:])
    totals = valgrind.totals(out_file)
    return dict(row, status="ok", instructions=totals.get("Ir"),
                d1_misses=totals.get("D1mr", 0) + totals.get("D1mw", 0),
                ll_misses=totals.get("DLmr", 0) + totals.get("DLmw", 0),
                data_refs=totals.get("Dr", 0) + totals.get("Dw", 0))
