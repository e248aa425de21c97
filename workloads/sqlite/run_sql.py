"""Runs a SQL script on an in-memory SQLite database and digests its results.

    python3 run_sql.py SCRIPT.sql [--no-lookaside]

SQLite comes from apsw (PyPI), which bundles its own SQLite built with the
lookaside allocator: Debian 12's libsqlite3 is compiled with
SQLITE_OMIT_LOOKASIDE (`pragma compile_options`), so its `sqlite3 -lookaside 0 0`
changes nothing. --no-lookaside sets SQLITE_CONFIG_LOOKASIDE to 0 slots before
SQLite initialises: every object the lookaside would have served goes to
malloc instead (the 2026 paper's way of switching a custom allocator off).

The last line is "checksum <16 hex>": SHA-256 over every result row (repr of
the row's values) in order; the same with and without lookaside.
"""
import hashlib
import sys

import apsw


def main(argv):
    if not argv or argv[1:] not in ([], ["--no-lookaside"]):
        sys.exit("usage: run_sql.py SCRIPT.sql [--no-lookaside]")
    if argv[1:] == ["--no-lookaside"]:
        apsw.shutdown()  # the lookaside default can only change while SQLite is not initialised
        apsw.config(apsw.SQLITE_CONFIG_LOOKASIDE, 0, 0)
        apsw.initialize()
    with open(argv[0]) as f:
        script = f.read()
    connection = apsw.Connection(":memory:")
    digest = hashlib.sha256()
    rows = 0
    for row in connection.execute(script):
        digest.update(repr(row).encode() + b"\n")
        rows += 1
    hits = connection.status(apsw.SQLITE_DBSTATUS_LOOKASIDE_HIT)[1]
    print(f"sqlite {apsw.sqlite_lib_version()}: {rows} result rows, lookaside hits {hits}")
    print(f"checksum {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main(sys.argv[1:])
