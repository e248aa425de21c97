"""What the report records about where it ran: the machine, the commit and
each allocator's library and version."""
import os
import platform
import re
import subprocess
from pathlib import Path

from .. import allocators, paths


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine() -> dict:
    cpu = re.search(r"^model name\s*:\s*(.+)$", _read("/proc/cpuinfo"), re.M)
    memory = re.search(r"^MemTotal:\s*(\d+) kB", _read("/proc/meminfo"), re.M)
    return {"hostname": platform.node(), "cpu": cpu.group(1).strip() if cpu else platform.processor(),
            "cores": os.cpu_count(), "memory_bytes": int(memory.group(1)) * 1024 if memory else None,
            "kernel": platform.release(), "system": platform.platform(),
            "load_average_at_start": list(os.getloadavg()), "python": platform.python_version()}


def git_commit() -> dict:
    def git(*args):
        try:
            return subprocess.run(["git", "-C", str(paths.REPO_ROOT), *args], capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
    return {"commit": git("rev-parse", "HEAD"), "describe": git("describe", "--always", "--dirty"),
            "branch": git("rev-parse", "--abbrev-ref", "HEAD")}


def allocator_versions(available: dict) -> dict:
    """Each allocator's library and version, from the registry."""
    return {name: allocators.version(name) for name in available}
