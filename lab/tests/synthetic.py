"""Synthetic results folders, as `strata-lab evaluate` writes them, with
known numbers: every experiment of the report, every cell at 1.0 s in every
round, and whatever a test sets on top."""
import csv
import json
from pathlib import Path

from strata_lab import misuse_suite
from strata_lab.evaluation import BENCH_FIELDS, MEMORY_FIELDS, PROFILE_FIELDS, RUN_FIELDS, VALGRIND_FIELDS

CHECK = "00000000000000aa"
SCALE = 2
ROUNDS = 6
# Noise patterns over the rounds: decided (tiny spread) and straddling (±15% around the target).
TIGHT = [1.0, 1.002, 0.998, 1.001, 0.999, 1.0]
WIDE = [0.8, 1.25, 0.85, 1.2, 0.9, 1.15]

EXPERIMENTS = [
    ("per-class", ["boxed-sim", "freelist16", "freelist-mix"], ["glibc", "jemalloc", "mimalloc"], ["custom", "naive"],
     ["Adv0", "Adv3"]),
    ("regions", ["compiler", "interp"], ["glibc", "mimalloc"], ["custom", "naive"], ["Adv0"]),
    ("resilience", ["interp", "parser", "scopes"], ["glibc", "mimalloc"], ["custom", "naive"], ["Adv0", "Adv3"]),
    ("real-programs", ["py-a", "py-b"], ["glibc", "mimalloc"], ["custom", "naive"], ["Adv0"]),
    ("real-programs", ["clang"], ["glibc", "jemalloc", "mimalloc"], ["custom"], ["Adv0", "Adv3"]),
    ("real-programs", ["perl", "bc"], ["glibc", "mimalloc"], ["naive"], ["Adv0"]),
    ("reaps", ["compiler", "interp", "parser", "server", "scopes"], ["glibc"], ["custom", "reap", "naive"], ["Adv0"]),
    ("general-purpose", ["cfrac", "text"], ["glibc", "lea", "strata", "jemalloc", "mimalloc"], ["naive"], ["Adv0"]),
    ("heap-layers", ["cfrac"], ["glibc", "lea", "kingsley", "kingsley-hand", "kingsley-coal"], ["naive"],
     ["Adv0"]),
    ("hardening", ["cfrac", "text"], ["glibc", "strata", "strata-hardened", "scudo", "mimalloc-secure"], ["naive"],
     ["Adv0"]),
    ("occupancy", ["parser"], ["jemalloc"], ["naive"], ["M10-O0", "M10-O20", "M10-O40", "M10-O60"]),
    ("vam-variants", ["cfrac", "parser"], ["vam", "vam-header", "vam-coarse"], ["naive"], ["Adv0"]),
]
MEMORY_SECTIONS = ("reaps", "general-purpose", "heap-layers", "vam-variants")


def run_row(workload, mode, allocator, preset, rnd, seconds, *, status="ok", checksum=CHECK, rss=10 << 20,
            wall=None):
    """A timed run whose program ran `seconds` of CPU time in `wall` seconds (the same, unless a test says)."""
    wall = seconds if wall is None else wall
    return {"round": rnd, "order": rnd, "workload": workload, "kind": "native", "mode": mode, "scale": SCALE,
            "seed": 1, "allocator": allocator, "preset": preset, "status": status,
            "exit_status": "exited with status 0" if status == "ok" else "killed by SIGSEGV",
            "checksum": checksum if status == "ok" else None, "cpu_seconds": seconds,
            "program_seconds": wall if status == "ok" else None,
            "program_cpu_seconds": seconds if status == "ok" else None, "peak_rss_bytes": rss}


def memory_row(workload, mode, allocator, preset, rnd, in_use, live=1 << 20):
    return {"round": rnd, "workload": workload, "kind": "native", "mode": mode, "scale": SCALE, "seed": 1,
            "allocator": allocator, "preset": preset, "status": "ok", "checksum": CHECK, "peak_live_bytes": live,
            "peak_in_use_bytes": in_use, "fragmentation": in_use / live, "samples": 10}


def write_csv(path: Path, fields: list, rows: list) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if row.get(k) is None else row.get(k) for k in fields})


class Synthetic:
    """A results folder in the making: times[cell key] = per-round seconds (CPU time, and wall time too unless
    wall[cell key] gives the wall times)."""

    def __init__(self, rounds: int = ROUNDS):
        self.rounds = rounds
        self.times, self.memory, self.bench, self.valgrind, self.extra_runs = {}, {}, [], [], []
        self.wall = {}
        self.meta_extra = {}
        self.misuse = []   # misuse.csv rows (hardening.FIELDS)
        self.files = {}   # path in the folder -> text (e.g. strata-pages' curve files)
        for section, workloads, allocators, modes, presets in EXPERIMENTS:
            for w in workloads:
                for m in modes:
                    for a in allocators:
                        for p in presets:
                            self.times[(w, m, SCALE, a, p)] = [1.0] * rounds
                            if section in MEMORY_SECTIONS:
                                self.memory[(w, m, SCALE, a, p)] = [2 << 20] * 3

    def set(self, workload, mode, allocator, preset, value: float, noise=TIGHT) -> "Synthetic":
        self.times[(workload, mode, SCALE, allocator, preset)] = [value * noise[i % len(noise)]
                                                                 for i in range(self.rounds)]
        return self

    def set_memory(self, workload, mode, allocator, in_use: float, noise=TIGHT) -> "Synthetic":
        self.memory[(workload, mode, SCALE, allocator, "Adv0")] = [in_use * noise[i] for i in range(3)]
        return self

    def add_pages(self, workload: str, allocator: str, curve: list, footprint: int, **fields) -> "Synthetic":
        """A [bench.pages] row and its fault curve (faults[m] for m pages), as the pages step writes them."""
        lines = ["memory_pages,memory_kib,faults"] + [f"{m},{4 * m},{f}" for m, f in enumerate(curve)]
        self.files[f"pages/{workload}-{allocator}/curve.csv"] = "\n".join(lines) + "\n"
        self.bench.append({"bench": "pages", "round": 1, "contender": workload, "allocator": allocator,
                           "status": "ok", "scale": 1, "mode": "naive", "references": curve[0],
                           "distinct_pages": footprint, "knee_pages": 0, "peak_working_set": footprint, **fields})
        return self

    def write(self, folder: Path, partial: bool = False, cpu_time: bool = True) -> Path:
        """cpu_time=False: runs.csv without program_cpu_seconds, as evaluations wrote it before it was recorded."""
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in self.files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        runs = [run_row(k[0], k[1], k[3], k[4], i + 1, t, wall=self.wall[k][i] if k in self.wall else None)
                for k, ts in self.times.items() for i, t in enumerate(ts)]
        write_csv(folder / "runs.csv", [f for f in RUN_FIELDS if cpu_time or f != "program_cpu_seconds"],
                  runs + self.extra_runs)
        write_csv(folder / "memory.csv", MEMORY_FIELDS,
                  [memory_row(k[0], k[1], k[3], k[4], i + 1, v) for k, vs in self.memory.items()
                   for i, v in enumerate(vs)])
        write_csv(folder / "profiles.csv", PROFILE_FIELDS,
                  [{"workload": w, "mode": "naive", "scale": SCALE, "seed": 1, "status": "ok", "checksum": CHECK,
                    "total_objects": 1000, "total_bytes": 64000, "average_size": 64.0, "peak_live_objects": 100,
                    "peak_live_bytes": 6400, "realloc_calls": 0, "free_calls": 1000}
                   for w in ("boxed-sim", "server", "cfrac")])
        write_csv(folder / "bench.csv", BENCH_FIELDS, self.bench)
        write_csv(folder / "valgrind.csv", VALGRIND_FIELDS, self.valgrind)
        write_csv(folder / "misuse.csv", misuse_suite.FIELDS, self.misuse)
        meta = {"format": "strata-evaluation", "partial": partial, "interrupted": partial,
                "config": {"path": "synthetic.toml", "name": "synthetic", "runs": self.rounds, "seed": 1,
                           "timeout_s": 60},
                "machine": {"cpu": "test cpu", "cores": 2, "memory_bytes": 1 << 30, "kernel": "6.1",
                            "load_average_at_start": [0.5, 0.5, 0.5]},
                "git": {"describe": "abc123"}, "allocators": {"glibc": {"library": None, "version": "glibc 2.36"}},
                "skipped_allocators": {"tcmalloc": "not installed; install: apt-get install libgoogle-perftools4"},
                "not_applicable": ["cfrac: custom"], "planned": {"runs": 999}, "completed": {"runs": len(runs)},
                "experiments": [{"section": s, "title": "", "workloads": w, "allocators": a, "modes": m,
                                 "presets": p, "scales": {x: SCALE for x in w}, "runs": self.rounds, "cells": 0}
                                for s, w, a, m, p in EXPERIMENTS]}
        meta.update(self.meta_extra)
        (folder / "meta.json").write_text(json.dumps(meta))
        return folder
