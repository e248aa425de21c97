"""Shared helpers for the lab tests: where the built pieces are, and running
the CLI (as a real process, so exit statuses are what a user sees) or a
program under the shims directly."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("STRATA_LAB_BUILD_DIR", REPO / "build" / "release"))
PATTERNS = BUILD / "tests/lab/lab_alloc_patterns"
SHIMS = BUILD / "src/lab"
# Allocators every test that says "each allocator" runs on: glibc, the peers of
# tools/apt/lab.txt, libstrata and the layers' Kingsley and Lea heaps (src/layered).
ALLOCATORS = ["glibc", "jemalloc", "mimalloc", "tcmalloc", "strata", "kingsley", "lea"]


def pytest_sessionstart(session):
    missing = [p for p in [PATTERNS, SHIMS / "libstrata-profile.so", SHIMS / "libstrata-precondition.so",
                           SHIMS / "libstrata-trace.so", SHIMS / "strata-replay"] if not p.exists()]
    if missing:  # fail loudly: the tests need the build (make test builds first)
        raise pytest.UsageError(f"lab tests need a build; missing {', '.join(map(str, missing))} "
                                "(run `make build` or set STRATA_LAB_BUILD_DIR)")


def lab(*args, env=None, cwd=None, timeout=120):
    """Runs `strata-lab ARGS` and returns the CompletedProcess."""
    full_env = dict(os.environ, STRATA_LAB_BUILD_DIR=str(BUILD))
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "strata_lab.cli", *map(str, args)], capture_output=True,
                          text=True, env=full_env, cwd=cwd, timeout=timeout)


def lab_ok(*args, **kwargs):
    result = lab(*args, **kwargs)
    assert result.returncode == 0, f"strata-lab {args} failed:\n{result.stdout}\n{result.stderr}"
    return result


def allocator_library(name):
    from strata_lab import allocators
    return allocators.resolve(name).preload()


def run_with_shims(shims, args, env, allocator="glibc"):
    """Runs a program with LD_PRELOAD = the named shims, then the allocator."""
    preload = [str(SHIMS / f"libstrata-{s}.so") for s in shims] + allocator_library(allocator)
    full_env = dict(os.environ, LD_PRELOAD=":".join(preload), **{k: str(v) for k, v in env.items()})
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, env=full_env, timeout=120)


def profile_of(tmp_path, mode, allocator="glibc", name=None):
    """Profile of lab_alloc_patterns MODE through the CLI: (profile dict, stdout of the program run)."""
    out = tmp_path / f"{name or mode}-{allocator}.json"
    result = lab_ok("profile", "-o", out, "--alloc", allocator, "--", PATTERNS, mode)
    return json.loads(out.read_text()), result.stdout
