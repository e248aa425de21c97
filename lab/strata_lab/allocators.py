"""The registry of allocators: which malloc library a program runs with (by
LD_PRELOAD), where that library is, how to get it when it is missing and what
version it is. Adding an allocator is one entry in REGISTRY; everything else
(--alloc, the evaluation, `strata-lab bench`, tools/peers/build.sh's check,
the tests that run each allocator) reads it from here."""
import glob
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .errors import LabError
from .paths import REPO_ROOT, build_dir

_LIBRARY_DIRS = ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"]


def peers_dir() -> Path:
    """Where `make peers` (tools/peers/build.sh) builds the peers Debian does
    not package: $STRATA_LAB_PEERS_DIR, else <repo>/build/peers."""
    configured = os.environ.get("STRATA_LAB_PEERS_DIR")
    return Path(configured) if configured else REPO_ROOT / "build" / "peers"


# ---------------------------------------------------------------------------
# Where a library is. Each kind finds its file (None: not there) and says
# what it looked for, for the message when it is missing.

@dataclass(frozen=True)
class Libc:
    """The C library's own malloc: nothing to preload."""

    def find(self) -> Optional[Path]:
        return None

    def wanted(self) -> str:
        return "the C library"


@dataclass(frozen=True)
class Soname:
    """A system library by shared-object name, the first of these installed."""
    names: tuple

    def find(self) -> Optional[Path]:
        for soname in self.names:
            found = _find_soname(soname)
            if found:
                return found
        return None

    def wanted(self) -> str:
        return f"none of {', '.join(self.names)} is installed"


@dataclass(frozen=True)
class SystemFile:
    """A library at a fixed place outside the linker's path (a glob: the
    newest match wins, so a point release of its package does not matter)."""
    pattern: str

    def find(self) -> Optional[Path]:
        matches = sorted(glob.glob(self.pattern))
        return Path(matches[-1]) if matches else None

    def wanted(self) -> str:
        return f"{self.pattern} is missing"


@dataclass(frozen=True)
class Built:
    """A library built here: relative to the build directory (strata's own)
    or to the peers directory (`make peers`). override: an environment
    variable that, when set, names the file instead."""
    relative: str
    root: str = "build"          # "build": build_dir(); "peers": peers_dir()
    override: Optional[str] = None

    def path(self) -> Path:
        if self.override and os.environ.get(self.override):
            return Path(os.environ[self.override])
        return (peers_dir() if self.root == "peers" else build_dir()) / self.relative

    def find(self) -> Optional[Path]:
        path = self.path()
        return path.resolve() if path.is_file() else None

    def wanted(self) -> str:
        return f"{self.path()} is missing"


# How to get an allocator's version (version()): from the C library, from
# Debian's package database, "built here", or the note `make peers` writes.
GLIBC, DPKG, BUILT_HERE, PEERS_NOTE = "glibc", "dpkg", "built here", "peers"


@dataclass(frozen=True)
class Entry:
    name: str
    where: object       # Libc, Soname, SystemFile or Built
    install: str        # how to get it: the hint shown when it is missing
    version: str        # GLIBC, DPKG, BUILT_HERE or PEERS_NOTE


REGISTRY = {e.name: e for e in [
    Entry("glibc", Libc(), "part of the system (libc6)", GLIBC),
    Entry("jemalloc", Soname(("libjemalloc.so.2",)), "apt-get install libjemalloc2 (tools/apt/lab.txt)", DPKG),
    Entry("tcmalloc", Soname(("libtcmalloc_minimal.so.4", "libtcmalloc.so.4")),
          "apt-get install libtcmalloc-minimal4 (tools/apt/lab.txt)", DPKG),
    Entry("mimalloc", Soname(("libmimalloc.so.2", "libmimalloc.so")),
          "apt-get install libmimalloc2.0 (tools/apt/lab.txt)", DPKG),
    # strata's own: libstrata ($STRATA_LAB_LIBSTRATA picks another build of
    # it), and the layers' general-purpose heaps as preloadable mallocs.
    Entry("strata", Built("src/malloc/libstrata.so", override="STRATA_LAB_LIBSTRATA"),
          "make build (builds src/malloc/libstrata.so; or set STRATA_LAB_BUILD_DIR)", BUILT_HERE),
    Entry("kingsley", Built("src/layered/libstrata-kingsley.so"),
          "make build (builds src/layered/libstrata-kingsley.so)", BUILT_HERE),
    Entry("lea", Built("src/layered/libstrata-lea.so"), "make build (builds src/layered/libstrata-lea.so)",
          BUILT_HERE),
    # The hand-written Kingsley of bench/layers (the layers' yardstick, 2001 Table 5/6), KingsleyHeap with
    # coalescing (2001 §8) and Vam's variants composed from the layers (Vam Table 2: src/layered/vam_variants.hpp).
    *[Entry(name, Built(f"src/layered/libstrata-{name}.so"), f"make build (builds src/layered/libstrata-{name}.so)",
            BUILT_HERE) for name in ("kingsley-hand", "kingsley-coal", "vam", "vam-header", "vam-coarse")],
    # Not packaged by Debian: built from their crates.io sources by `make peers`.
    Entry("mimalloc3", Built("mimalloc3/libmimalloc.so", root="peers"),
          "make peers (tools/peers/build.sh, needs cargo; or set STRATA_LAB_PEERS_DIR)", PEERS_NOTE),
    Entry("snmalloc", Built("snmalloc/libsnmallocshim.so", root="peers"),
          "make peers (tools/peers/build.sh, needs cargo; or set STRATA_LAB_PEERS_DIR)", PEERS_NOTE),
    # Their hardened builds, for the hardening section (strata-lab misuse): the same sources, by `make peers`.
    Entry("mimalloc-secure", Built("mimalloc-secure/libmimalloc-secure.so", root="peers"),
          "make peers (tools/peers/build.sh, needs cargo; or set STRATA_LAB_PEERS_DIR)", PEERS_NOTE),
    Entry("snmalloc-checks", Built("snmalloc/libsnmallocshim-checks.so", root="peers"),
          "make peers (tools/peers/build.sh, needs cargo; or set STRATA_LAB_PEERS_DIR)", PEERS_NOTE),
    # libstrata's hardened build (canaries, encoded free lists, quarantine, zero on free, guard pages), beside libstrata.so.
    Entry("strata-hardened", Built("src/malloc/libstrata-hardened.so"),
          "make build (builds src/malloc/libstrata-hardened.so; or set STRATA_LAB_BUILD_DIR)", BUILT_HERE),
    # LLVM's hardened allocator, the standalone scudo that compiler-rt ships.
    Entry("scudo", SystemFile("/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-x86_64.so"),
          "apt-get install libclang-rt-14-dev (tools/apt/lab.txt)", DPKG),
]}
KNOWN = list(REGISTRY)


@dataclass(frozen=True)
class Allocator:
    name: str
    library: Optional[Path]  # None: the C library's own malloc, nothing to preload

    def preload(self) -> list:
        return [str(self.library)] if self.library else []

    def malloc_from(self) -> str:
        """A part of the file name malloc must come from under this allocator
        (what bench/malloc's --expect-malloc-from checks)."""
        return str(self.library) if self.library else "libc.so.6"


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


def _is_path(name: str) -> bool:
    return "/" in name or name.endswith(".so") or ".so." in name


def install_hint(name: str) -> str:
    """How to get a registered allocator (for a path: nothing to install)."""
    entry = REGISTRY.get(name)
    if entry is None:
        return "see docs/lab.md" if not _is_path(name) else "a path: build or copy the library there"
    return entry.install


def resolve(name: str, option: str = "--alloc", label: Optional[str] = None) -> Allocator:
    """One of KNOWN, or a path to a malloc library. A missing one is a
    LabError naming option, the allocator (as label, when the user knows it
    by another name), what is missing and how to get it."""
    entry = REGISTRY.get(name)
    if entry is not None:
        if isinstance(entry.where, Libc):
            return Allocator(name, None)
        library = entry.where.find()
        if library is None:
            raise LabError(f"{option} {label or name}: {entry.where.wanted()}; to get it: {entry.install}")
        return Allocator(name, library)
    if _is_path(name):
        path = Path(name)
        if not path.is_file():
            raise LabError(f"{option} {name}: no such file")
        if not os.access(path, os.R_OK):
            raise LabError(f"{option} {name}: not readable")
        return Allocator(path.name, path.resolve())
    raise LabError(f"{option}: unknown allocator '{name}'; known: {', '.join(KNOWN)}, "
                   "or a path to a malloc library")


# ---------------------------------------------------------------------------
# Versions.

def _debian_package(real: str) -> str:
    """'package version' of the Debian package that owns the file, or ''."""
    try:
        owner = subprocess.run(["dpkg", "-S", real], capture_output=True, text=True, timeout=10).stdout
        if not owner:
            return ""
        package = owner.split(":")[0]
        return package + " " + subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                                              capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _peers_note(name: str) -> str:
    """The line tools/peers/build.sh wrote for it in <peers>/VERSIONS."""
    try:
        lines = (peers_dir() / "VERSIONS").read_text().splitlines()
    except OSError:
        return "built by make peers (no VERSIONS file)"
    return next((line for line in lines if line.split()[:1] == [name]), "built by make peers")


def version(name: str) -> dict:
    """{"library", "real_path", "version"} of an allocator (resolved first:
    a missing one is a LabError). For the report's list of allocators."""
    allocator = resolve(name)
    entry = REGISTRY.get(name)
    if allocator.library is None:
        libc = platform.libc_ver()[1]
        return {"library": None, "version": libc and f"glibc {libc}"}
    real = os.path.realpath(allocator.library)
    how = entry.version if entry else DPKG
    if how == PEERS_NOTE:
        text = _peers_note(name)
    elif how == DPKG:
        text = _debian_package(real) or "built here"
    else:
        text = "built here"
    return {"library": str(allocator.library), "real_path": real, "version": text}


# ---------------------------------------------------------------------------
# Does a preload take effect? ld.so only warns when it cannot load one.

def malloc_bindings(library: Path, program: str = "/bin/ls") -> list:
    """The files a program's calls to malloc bind to under LD_PRELOAD=library
    (from LD_DEBUG=bindings): the library alone when the preload works."""
    env = dict(os.environ, LD_PRELOAD=str(library), LD_DEBUG="bindings")
    done = subprocess.run([program, "/"], env=env, capture_output=True, text=True, cwd="/", timeout=60)
    targets = []
    for line in done.stderr.splitlines():
        if "normal symbol `malloc'" in line and " to " in line:
            target = line.split(" to ", 1)[1].split(" [", 1)[0].strip()
            if target not in targets:
                targets.append(target)
    return targets


def check_binds_malloc(name: str) -> Path:
    """The allocator's library, after checking that malloc binds to it and to
    nothing else under LD_PRELOAD; a LabError otherwise."""
    library = resolve(name).library
    if library is None:
        raise LabError(f"{name}: nothing is preloaded, nothing to check")
    targets = malloc_bindings(library)
    if targets != [str(library)]:
        raise LabError(f"{name}: malloc does not bind to {library} under LD_PRELOAD: binds to "
                       f"{', '.join(targets) or 'nothing'}")
    return library


def main(argv=None) -> int:
    """python -m strata_lab.allocators check NAME...: prints each library after
    checking that malloc binds to it (tools/peers/build.sh runs this);
    python -m strata_lab.allocators path NAME...: just the libraries."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2 or argv[0] not in ("check", "path"):
        print("usage: python -m strata_lab.allocators check|path NAME...", file=sys.stderr)
        return 2
    try:
        for name in argv[1:]:
            print(check_binds_malloc(name) if argv[0] == "check" else resolve(name).library)
    except LabError as error:
        print(f"strata_lab.allocators: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
