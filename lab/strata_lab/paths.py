"""Where the lab finds its compiled pieces: the build directory."""
import os
from pathlib import Path

from .errors import LabError

REPO_ROOT = Path(__file__).resolve().parents[2]


def build_dir() -> Path:
    """$STRATA_LAB_BUILD_DIR, else <repo>/build/release."""
    configured = os.environ.get("STRATA_LAB_BUILD_DIR")
    return Path(configured) if configured else REPO_ROOT / "build" / "release"


def _built(relative: str) -> Path:
    path = build_dir() / relative
    if not path.is_file():
        raise LabError(f"{path} is missing: build strata first (`make build`) "
                       "or point STRATA_LAB_BUILD_DIR at a build directory")
    return path


def shim(name: str) -> Path:
    """A preload shim: profile, precondition or trace."""
    return _built(f"src/lab/libstrata-{name}.so")


def replayer() -> Path:
    return _built("src/lab/strata-replay")
