"""Runs one pyperformance benchmark in this process a fixed number of times.

    python3 pyperformance_harness.py SCRIPT NAME LOOPS SEED [RESULT_EXPR] [-- SCRIPT_ARGS...]

An argument "{output}" in SCRIPT_ARGS is replaced by a temporary file's path
(for benchmarks that can write their result, e.g. --filename of raytrace).

pyperf's Runner spawns worker processes and calibrates its loop counts; a
workload wants one process doing a fixed amount of work. So the benchmark
script runs as __main__ with pyperf.Runner replaced by CallRunner below: its
bench_func(name, f, *args) calls f(*args) LOOPS times and its
bench_time_func(name, f, *args) calls f(LOOPS, *args) once (pyperf's own
meaning of "loops").

The last line is "checksum <16 hex>": SHA-256 over the benchmark's name, the
loop count, the value of every bench_func call (repr), whatever the script
printed (e.g. deltablue's "Chain test failed."), the {output} file if any,
and, if RESULT_EXPR is given, that expression evaluated in the script's
globals after the run (state the benchmark computed, or one more call of its
code on its data). bench_time_func returns only its elapsed time, which is
not digested.
"""
import argparse
import contextlib
import hashlib
import io
import os
import random
import runpy
import sys
import tempfile

import pyperf


class CallRunner:
    """Stands in for pyperf.Runner: calls the benchmark instead of timing it."""
    loops = 1
    results = []

    def __init__(self, *args, **kwargs):
        self.metadata = {}
        self.argparser = argparse.ArgumentParser()

    def parse_args(self, args=None):
        return self.argparser.parse_args(sys.argv[1:] if args is None else args)

    def bench_func(self, name, func, *args, inner_loops=None, metadata=None):
        for _ in range(CallRunner.loops):
            CallRunner.results.append(repr(func(*args)))

    def bench_time_func(self, name, func, *args, inner_loops=None, metadata=None):
        func(CallRunner.loops, *args)


def main(argv):
    if "--" in argv:
        split = argv.index("--")
        ours, script_args = argv[:split], argv[split + 1:]
    else:
        ours, script_args = argv, []
    if len(ours) not in (4, 5):
        sys.exit("usage: pyperformance_harness.py SCRIPT NAME LOOPS SEED [RESULT_EXPR] [-- SCRIPT_ARGS...]")
    script, name, loops, seed = ours[0], ours[1], int(ours[2]), int(ours[3])
    result_expr = ours[4] if len(ours) == 5 else None
    CallRunner.loops = loops
    pyperf.Runner = CallRunner
    random.seed(seed)  # benchmarks that draw random numbers without seeding them get ours
    output_dir = tempfile.mkdtemp(prefix="strata-pyperf-")
    output = os.path.join(output_dir, "result")
    sys.argv = [script] + [output if arg == "{output}" else arg for arg in script_args]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace = runpy.run_path(script, run_name="__main__")
    digest = hashlib.sha256(f"{name} {loops}\n".encode())
    for value in CallRunner.results:
        digest.update(value.encode() + b"\n")
    digest.update(printed.getvalue().encode())
    if "{output}" in script_args:
        with open(output, "rb") as f:
            digest.update(f.read())
        os.unlink(output)
    os.rmdir(output_dir)
    if result_expr is not None:
        digest.update(repr(eval(result_expr, namespace)).encode())
    sys.stdout.write(printed.getvalue())
    print(f"{name}: {loops} loops, {len(CallRunner.results)} results digested"
          + (", plus its output file" if "{output}" in script_args else "")
          + (f", plus {result_expr}" if result_expr else ""))
    print(f"checksum {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main(sys.argv[1:])
