"""`strata-lab trace record` and `trace replay`: record a program's
allocation trace (libstrata-trace.so), replay it on any allocator with
strata-replay. The file format is defined once, in src/lab/trace_format.hpp
(docs/lab.md describes it); this module reads its constants from there."""
import functools
import json
import re
import struct
import tempfile
from pathlib import Path

from . import frag, paths, profiling, runner
from .errors import LabError, ProgramFailed

FORMAT_HEADER = paths.REPO_ROOT / "src" / "lab" / "trace_format.hpp"


@functools.cache
def trace_format() -> dict:
    """The format's constants, read from their one definition, the C++ header
    the recorder and the replayer compile (FORMAT_HEADER): header and trailer
    magic, version, header and trailer sizes, the trailer's fields in order."""
    try:
        text = FORMAT_HEADER.read_text()
    except OSError as e:
        raise LabError(f"{FORMAT_HEADER}: cannot read the trace format ({e.strerror})") from None

    def constant(name, pattern):
        m = re.search(rf"\b{name}\b[^=]*=\s*{pattern}", text)
        if not m:
            raise LabError(f"{FORMAT_HEADER}: no {name} in the trace format")
        return m.group(1)

    def magic(name):
        return "".join(re.findall(r"'(.)'", constant(name, r"\{([^}]*)\}"))).encode()

    trailer = re.search(r"struct Trailer \{([^}]*)\}", text)
    if not trailer:
        raise LabError(f"{FORMAT_HEADER}: no struct Trailer in the trace format")
    return {
        "header": magic("kHeaderMagic"),
        "trailer": magic("kTrailerMagic"),
        "version": int(constant("kVersion", r"(\d+)")),
        "header_bytes": int(constant("kHeaderBytes", r"(\d+)")),
        "trailer_bytes": int(constant("kTrailerBytes", r"(\d+)")),
        "trailer_fields": re.findall(r"std::uint64_t (\w+);", trailer.group(1)),
    }


def read_summary(path) -> dict:
    """The trailer of a complete trace; LabError naming the file and problem otherwise."""
    path = Path(path)
    fmt = trace_format()
    header_bytes, trailer_bytes = fmt["header_bytes"], fmt["trailer_bytes"]
    try:
        with open(path, "rb") as f:
            header = f.read(header_bytes)
            f.seek(0, 2)
            size = f.tell()
            if size < header_bytes + trailer_bytes:
                raise LabError(f"{path}: malformed trace: only {size} bytes, too short to be a trace")
            f.seek(size - trailer_bytes)
            trailer = f.read(trailer_bytes)
    except FileNotFoundError:
        raise LabError(f"{path}: no such trace file") from None
    except IsADirectoryError:
        raise LabError(f"{path}: is a directory, not a trace file") from None
    except PermissionError:
        raise LabError(f"{path}: trace file is not readable (permission denied)") from None
    if header[:8] != fmt["header"]:
        raise LabError(f"{path}: malformed trace: not a strata trace (bad magic)")
    version = struct.unpack("<I", header[8:12])[0]
    if version != fmt["version"]:
        raise LabError(f"{path}: unsupported trace version {version} (this lab reads version {fmt['version']})")
    if trailer[:8] != fmt["trailer"]:
        raise LabError(f"{path}: malformed trace: incomplete (no trailer: the recorded program "
                       "did not exit normally, or the file was cut)")
    fields = fmt["trailer_fields"]
    return dict(zip(fields, struct.unpack(f"<{len(fields)}Q", trailer[8:])))


def record(args) -> int:
    output = Path(args.output)
    preload = [str(paths.shim("trace"))] + args.allocator.preload()
    with tempfile.TemporaryDirectory(prefix="strata-trace-") as tmp:
        result = runner.run(args.command, preload, {"STRATA_LAB_TRACE_OUT": f"{tmp}/trace.%p.bin"})
        produced = Path(tmp) / f"trace.{result.pid}.bin"
        if not produced.exists():
            result.fail_if_not_ok("no trace was written")
            raise LabError("the program exited but wrote no trace (was it killed, or statically linked?)")
        children = profiling.collect(Path(tmp), result.pid, output, ".bin")
    summary = read_summary(output)
    print(f"strata-lab trace: {output}: {summary['records']:,} operations on {summary['objects']:,} objects "
          f"from {summary['threads']} threads; peak live {summary['peak_live_bytes']:,} bytes, "
          f"{summary['peak_live_objects']:,} objects")
    for child in children:
        print(f"strata-lab trace: child process trace {child}")
    result.fail_if_not_ok(f"the trace in {output} covers the run up to that exit")
    return 0


def replay(args) -> int:
    recorded = read_summary(args.trace)  # a bad trace stops us before anything runs
    if args.interval <= 0:
        raise LabError(f"--interval {args.interval}: must be > 0 ms")
    command = [str(paths.replayer()), str(Path(args.trace).resolve())]
    with tempfile.TemporaryDirectory(prefix="strata-replay-") as tmp:
        report_file = Path(tmp) / "report.json"
        sampler = frag.Sampler(Path(tmp))
        result = runner.run(command, args.allocator.preload(),
                            {"STRATA_LAB_LIVE_OUT": f"{tmp}/live.%p", "STRATA_LAB_REPLAY_REPORT": report_file,
                             "STRATA_LAB_REPLAY_THREADS": "1" if args.threads else "0"},
                            sampler=sampler, interval_s=args.interval / 1000)
        report = json.loads(report_file.read_text()) if report_file.exists() else None
    if result.returncode == 3 and report is not None:
        raise ProgramFailed(f"replay on {args.allocator.name}: {report['failed_allocations']} allocations "
                            "failed (out of memory?)")
    result.fail_if_not_ok("the replay did not finish")
    if report is None:
        raise ProgramFailed("the replayer wrote no report")
    summary = frag.summarize(sampler, [report])
    summary.update({"allocator": args.allocator.name, "trace": str(args.trace),
                    "replay_seconds": report["replay_ns"] / 1e9, "peak_rss_bytes": result.peak_rss_bytes,
                    "recorded_peak_live_bytes": recorded["peak_live_bytes"],
                    "recorded_peak_live_objects": recorded["peak_live_objects"],
                    "records": report["records"], "threads": report["replayed_on_recorded_threads"]})
    if args.csv:
        sampler.write_csv(args.csv)
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    where = f" on {recorded['threads']} threads" if args.threads else ""
    print(f"strata-lab replay: {args.allocator.name}: {report['records']:,} operations{where} in "
          f"{summary['replay_seconds']:.6f} s; peak RSS {result.peak_rss_bytes / 2**20:.1f} MiB; "
          f"{frag.describe(summary)}")
    if (report["peak_live_bytes"], report["peak_live_objects"]) != \
            (recorded["peak_live_bytes"], recorded["peak_live_objects"]):
        raise ProgramFailed(f"the replay reached peak live {report['peak_live_bytes']} bytes / "
                            f"{report['peak_live_objects']} objects, the recording "
                            f"{recorded['peak_live_bytes']} / {recorded['peak_live_objects']}")
    return 0
