"""What the report records about where it ran: the machine, the commit and
each allocator's library and version."""
import os
import platform
import re
import subprocess
from pathlib import Path

from .. import paths


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
    """Library path, its real file and (for Debian's) the package version."""
    out = {}
    for name, library in available.items():
        if not library:
            out[name] = {"library": None, "version": platform.libc_ver()[1] and
                         f"glibc {platform.libc_ver()[1]}"}
            continue
        real = os.path.realpath(library)
        package = ""
        try:
            owner = subprocess.run(["dpkg", "-S", real], capture_output=True, text=True, timeout=10).stdout
            if owner:
                pkg = owner.split(":")[0]
                package = pkg + " " + subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                                                     capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            pass
        out[name] = {"library": library, "real_path": real, "version": package or "built here"}
    return out
