"""The allocator registry: each Debian peer resolves to an installed library
that its package owns, a missing allocator is an error with its install hint,
the peers `make peers` builds are found in the peers directory, and each
library really takes malloc over under LD_PRELOAD."""
import os
import subprocess
import sys

import pytest

from strata_lab import allocators, valgrind
from strata_lab.errors import LabError

from conftest import REPO

DEBIAN_PEERS = {"jemalloc": "libjemalloc2", "tcmalloc": "libtcmalloc-minimal4", "mimalloc": "libmimalloc2.0",
                "scudo": "libclang-rt-14-dev"}


@pytest.mark.parametrize("name", sorted(DEBIAN_PEERS))
def test_each_debian_peer_resolves_to_its_package(name):
    library = allocators.resolve(name).library
    assert library.is_file()
    info = allocators.version(name)
    assert info["library"] == str(library) and info["real_path"] == os.path.realpath(library)
    assert info["version"].startswith(DEBIAN_PEERS[name] + " "), info
    assert DEBIAN_PEERS[name] in allocators.install_hint(name)


@pytest.mark.parametrize("name", sorted(DEBIAN_PEERS))
def test_each_debian_peer_is_installed_by_make_setup(name):
    listed = set()
    for path in (REPO / "tools" / "apt").glob("*.txt"):
        listed |= {line.split("#")[0].strip() for line in path.read_text().splitlines()}
    assert DEBIAN_PEERS[name] in listed


@pytest.mark.parametrize("name", ["scudo", "jemalloc", "strata"])
def test_malloc_binds_to_the_preloaded_library(name):
    assert allocators.check_binds_malloc(name) == allocators.resolve(name).library


def test_a_library_that_does_not_replace_malloc_fails_the_binding_check(monkeypatch):
    # libm defines no malloc: the program's malloc stays glibc's.
    monkeypatch.setitem(allocators.REGISTRY, "libm", allocators.Entry(
        "libm", allocators.Soname(("libm.so.6",)), "part of libc6", allocators.DPKG))
    with pytest.raises(LabError, match=r"libm: malloc does not bind to .*libm\.so\.6.*binds to .*libc\.so\.6"):
        allocators.check_binds_malloc("libm")


def test_glibc_preloads_nothing_and_names_the_c_library():
    glibc = allocators.resolve("glibc")
    assert glibc.preload() == [] and glibc.malloc_from() == "libc.so.6"
    assert allocators.version("glibc")["version"].startswith("glibc 2.")


@pytest.mark.parametrize("name", ["mimalloc3", "snmalloc"])
def test_a_missing_source_peer_says_make_peers(name, tmp_path, monkeypatch):
    monkeypatch.setenv("STRATA_LAB_PEERS_DIR", str(tmp_path))
    with pytest.raises(LabError) as error:
        allocators.resolve(name, "--contenders")
    assert str(error.value).startswith(f"--contenders {name}: {tmp_path}/")
    assert "is missing; to get it: make peers" in str(error.value)


def test_source_peers_are_found_in_the_peers_directory_with_their_version_note(tmp_path, monkeypatch):
    monkeypatch.setenv("STRATA_LAB_PEERS_DIR", str(tmp_path))
    for name in ("mimalloc3", "snmalloc"):
        where = allocators.REGISTRY[name].where
        (tmp_path / where.relative).parent.mkdir(parents=True)
        (tmp_path / where.relative).write_bytes(b"")
    (tmp_path / "VERSIONS").write_text("mimalloc3 30302 (crate libmimalloc-sys 0.1.49)\n"
                                       "snmalloc crate snmalloc-sys 0.7.6\n")
    for name in ("mimalloc3", "snmalloc"):
        assert allocators.resolve(name).library == (tmp_path / allocators.REGISTRY[name].where.relative).resolve()
    assert allocators.version("mimalloc3")["version"] == "mimalloc3 30302 (crate libmimalloc-sys 0.1.49)"
    assert allocators.version("snmalloc")["version"] == "snmalloc crate snmalloc-sys 0.7.6"


def test_strata_is_found_in_the_build_and_reported_as_built_here():
    info = allocators.version("strata")
    assert info["library"].endswith("libstrata.so.0.1.0") or "libstrata.so" in info["library"]
    assert info["version"] == "built here"


def test_every_entry_has_an_install_hint_and_a_way_to_its_version():
    for name, entry in allocators.REGISTRY.items():
        assert allocators.install_hint(name) == entry.install and entry.install
        assert entry.version in (allocators.GLIBC, allocators.DPKG, allocators.BUILT_HERE, allocators.PEERS_NOTE)
    assert allocators.KNOWN == list(allocators.REGISTRY)


def test_unknown_allocator_lists_the_known_ones():
    with pytest.raises(LabError, match="unknown allocator 'hoard'; known: glibc, jemalloc"):
        allocators.resolve("hoard")


def test_the_module_command_prints_checked_libraries_and_fails_on_a_missing_one(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO / "lab"), STRATA_LAB_PEERS_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "strata_lab.allocators", "check", "scudo"], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0 and done.stdout.strip() == str(allocators.resolve("scudo").library)
    done = subprocess.run([sys.executable, "-m", "strata_lab.allocators", "check", "mimalloc3"], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 1 and "make peers" in done.stderr


# ---- valgrind.py: the totals of a callgrind or cachegrind file ------------

def test_valgrind_totals_pairs_events_with_the_summary(tmp_path):
    out = tmp_path / "cachegrind.out"
    out.write_text("desc: I1 cache\ncmd: prog\nevents: Ir D1mr D1mw DLmr DLmw\nfl=a.c\n1 2 3 4 5 6\n"
                   "summary: 100 7 8 2 1\n")
    assert valgrind.totals(out) == {"Ir": 100, "D1mr": 7, "D1mw": 8, "DLmr": 2, "DLmw": 1}
    out.write_text("events: Ir\ntotals: 42\n")
    assert valgrind.totals(out) == {"Ir": 42}


def test_valgrind_totals_without_a_summary_is_an_error(tmp_path):
    out = tmp_path / "callgrind.out"
    out.write_text("events: Ir\n")
    with pytest.raises(LabError, match="no events/summary line"):
        valgrind.totals(out)


def test_callgrind_counts_more_instructions_for_more_work():
    few = valgrind.instructions(["/bin/true"], dict(os.environ))
    more = valgrind.instructions(["/bin/ls", "-l", "/usr/bin"], dict(os.environ))
    assert 0 < few < more
