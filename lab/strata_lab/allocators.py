"""--alloc NAME: which malloc library a program runs with (by LD_PRELOAD)."""
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .errors import LabError
from .paths import build_dir

# Peer allocators by shared-object name (Debian packages in tools/apt/lab.txt).
_SONAMES = {
    "jemalloc": ["libjemalloc.so.2"],
    "tcmalloc": ["libtcmalloc_minimal.so.4", "libtcmalloc.so.4"],
    "mimalloc": ["libmimalloc.so.2", "libmimalloc.so"],
}
# strata's own: libstrata, and the layers' general-purpose heaps built as
# preloadable mallocs (src/layered), by their path in the build directory.
_BUILT = {
    "strata": "src/malloc/libstrata.so",
    "kingsley": "src/layered/libstrata-kingsley.so",
    "lea": "src/layered/libstrata-lea.so",
}
KNOWN = ["glibc", "jemalloc", "tcmalloc", "mimalloc", "strata", "kingsley", "lea"]
_LIBRARY_DIRS = ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"]


@dataclass(frozen=True)
class Allocator:
    name: str
    library: Optional[Path]  # None: the C library's own malloc, nothing to preload

    def preload(self) -> list:
        return [str(self.library)] if self.library else []


def _find_soname(soname: str) -> Optional[Path]:
    for directory in _LIBRARY_DIRS:
        candidate = Path(directory) / soname
        if candidate.exists():
            return candidate
    try:
        listing = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return None
    for line in listing.splitlines():
        if line.strip().startswith(soname + " ") and "=>" in line:
            return Path(line.split("=>", 1)[1].strip())
    return None


def resolve(name: str) -> Allocator:
    """One of KNOWN, or a path to a malloc library."""
    if name == "glibc":
        return Allocator(name, None)
    if name in _BUILT:
        default = build_dir() / _BUILT[name]
        library = Path(os.environ.get("STRATA_LAB_LIBSTRATA", default)) if name == "strata" else default
        if not library.is_file():
            raise LabError(f"--alloc {name}: {library} is missing (not built; "
                           "build it with `make build` or set STRATA_LAB_BUILD_DIR)")
        return Allocator(name, library.resolve())
    if name in _SONAMES:
        for soname in _SONAMES[name]:
            found = _find_soname(soname)
            if found:
                return Allocator(name, found)
        raise LabError(f"--alloc {name}: none of {', '.join(_SONAMES[name])} is installed "
                       "(tools/apt/lab.txt lists the Debian packages)")
    if "/" in name or name.endswith(".so") or ".so." in name:
        path = Path(name)
        if not path.is_file():
            raise LabError(f"--alloc {name}: no such file")
        if not os.access(path, os.R_OK):
            raise LabError(f"--alloc {name}: not readable")
        return Allocator(path.name, path.resolve())
    raise LabError(f"unknown allocator '{name}'; known: {', '.join(KNOWN)}, or a path to a malloc library")
