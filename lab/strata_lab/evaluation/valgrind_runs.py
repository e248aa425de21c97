"""--cachegrind: one cachegrind and one callgrind run per cell (simulated
cache misses and instruction counts: deterministic, so once is enough)."""
import re
import subprocess
import time
from pathlib import Path
from typing import Optional

from .. import allocators, paths, precondition, runner, valgrind
from .plan import Cell


def valgrind_run(tool: str, cell: Cell, workload, seed: int, profile_path: Optional[str], folder: Path,
                 timeout_s: float) -> dict:
    """One cachegrind or callgrind run of a cell (deterministic: once per cell)."""
    row = {"workload": cell.workload, "mode": cell.mode, "scale": cell.scale, "seed": seed,
           "allocator": cell.allocator, "preset": cell.preset, "tool": tool}
    invocation = workload.invocation(cell.mode, cell.scale, seed)
    chosen = precondition.choose(cell.preset, None, None)
    variables = dict(invocation.env, **precondition.shim_variables(chosen, seed, profile_path))
    variables["STRATA_REAP_CHECK"] = "0"  # under Valgrind the reap would switch to its checked mode
    preload = [str(paths.shim("precondition"))] + allocators.resolve(cell.allocator).preload()
    out_dir = folder / "valgrind"
    out_dir.mkdir(exist_ok=True)
    out_file = out_dir / (re.sub(r"[^A-Za-z0-9_.-]", "_", f"{tool}.{cell.label()}") + ".out")
    options = ["--cache-sim=yes"] if tool == "cachegrind" else []
    argv = ["valgrind", f"--tool={tool}", f"--{tool}-out-file={out_file}", *options, *invocation.argv]
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
    row.update(status="ok", instructions=totals.get("Ir"))
    if tool == "cachegrind":
        row.update(d1_misses=totals.get("D1mr", 0) + totals.get("D1mw", 0),
                   ll_misses=totals.get("DLmr", 0) + totals.get("DLmw", 0),
                   data_refs=totals.get("Dr", 0) + totals.get("Dw", 0))
    return row
