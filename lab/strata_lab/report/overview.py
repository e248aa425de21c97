"""The parts of the report around the sections: the claims first (the paper
against measurement figure, the compact claims table, a forest plot per paper), the
fastest and leanest configuration per workload, the setup, the budget of the
adaptive rounds, and the failed runs."""
import textwrap

from ..claims import NOT_MEASURED, tally
from ..measurements import good
from . import claimview, plots
from .results import MIB, Results, Section


def claims_section(r: Results, sections: list) -> Section:
    s = Section("claims", "Claims")
    claims = [c for sec in sections for c in sec.claims]
    counts = tally(claims)
    meta = r.meta
    if meta.get("partial"):
        done = meta.get("completed", {})
        s.p(f"**PARTIAL REPORT: the evaluation was interrupted** after {done.get('runs', 0)} of "
            f"{meta.get('planned', {}).get('runs', '?')} planned runs; every figure below is from the runs gathered "
            "so far.")
    s.p(f"{len(claims)} claims: {counts['held']} held, {counts['not held']} not held, {counts['inconclusive']} "
        f"inconclusive, {counts[NOT_MEASURED]} not measured. **held**: the interval lies on the claim's side (inside "
        "the margin, for 'within' claims); **not held**: on the other side; **inconclusive**: it straddles the "
        "threshold. Intervals are bootstrap intervals over paired rounds, at 95% for a claim with one number. A claim "
        "about every program is judged per program (an intersection-union test): a program breaks it by its "
        "Bonferroni-corrected interval (the level each row states) and holds it by its 95% one. "
        "Claims marked *ours* are not a paper's.")
    _paper_vs_ours(r, s, claims)
    s.claims_table(claims, filters=True)
    _forests(r, s, claims)
    _budget(r, s)
    return s


def _paper_vs_ours(r: Results, s: Section, claims: list) -> None:
    """The claims with a numeric paper figure: one dot each (the deciding program's estimate), numbered."""
    points, rows = [], []
    for c in claims:
        d = claimview.deciding(c)
        if c.paper_value is None or d is None:
            continue
        points.append((len(points) + 1, c.paper_value, d[1], c.verdict))
        rows.append([str(len(points)), c.statement, f"{c.paper_value:g} ({c.paper_figure})", claimview.ours_text(c)])
    drawn = plots.paper_vs_ours(r.plot_path("paper-vs-ours"), points)
    s.img(drawn, "the paper's figure against ours, one dot per claim with a numeric paper figure (numbered below)")
    if drawn is not None or not r.draw:
        s.table(["#", "claim", "paper", "ours"], rows)


def _forests(r: Results, s: Section, claims: list) -> None:
    """One forest plot per paper (split when it would be too tall), its claims named in words."""
    for key in dict.fromkeys(claimview.paper_key(c) for c in claims):
        rows = [(_forest_label(c, label), e, c.criterion, c.side_of(label))
                for c in claims if claimview.paper_key(c) == key
                for label, e in c.estimates.items() if e is not None and e.low > 0]
        chunks = [rows[i:i + plots.FOREST_ROWS] for i in range(0, len(rows), plots.FOREST_ROWS)]
        for n, chunk in enumerate(chunks, 1):
            part = f" ({n} of {len(chunks)})" if len(chunks) > 1 else ""
            title = claimview.paper_label(key) + part
            s.img(plots.forest(r.plot_path(f"claims-forest-{key}-{n}"), chunk, title),
                  f"the claims of {title}: each interval against its threshold")


def _forest_label(c, label: str, width: int = 62) -> str:
    """The claim in words, on at most two lines, after the program for a claim judged per program."""
    lines = textwrap.wrap(c.statement if len(c.estimates) == 1 else f"[{label}] {c.statement}", width)
    if len(lines) > 2:
        lines = [lines[0], textwrap.shorten(" ".join(lines[1:]), width, placeholder="…")]
    return "\n".join(lines)


def _budget(r: Results, s: Section) -> None:
    adaptive = r.meta.get("adaptive")
    if not adaptive:
        return
    s.p(f"Adaptive rounds: after {adaptive.get('base_rounds')} rounds of every cell, "
        f"{adaptive.get('extra_runs', 0)} runs in {adaptive.get('extra_rounds', 0)} extra rounds"
        f"{_partial(adaptive.get('partial_rounds', 0))}{_focused(adaptive.get('focused_rounds', 0))} went to the cells of "
        f"undecided claims, using {adaptive.get('used_s', 0):.0f} s of a {adaptive.get('budget_s', 0):.0f} s budget "
        f"({adaptive.get('stopped', '')}).")


def _focused(rounds: int) -> str:
    return (f" ({rounds} focused: only the claims projected to decide within the rounds and budget left, cheapest "
            "first)") if rounds else ""


def _partial(rounds: int) -> str:
    return f" ({rounds} of them partial: only the undecided claims whose cells fit the budget)" if rounds else ""


def fastest_and_leanest(r: Results) -> Section:
    s = Section("summary", "Fastest and leanest per workload")
    rows = []
    for w in sorted({k[0] for k in r.cells}):
        clean = [c for k, c in r.cells.items() if k[0] == w and k[4] == "Adv0" and c.time]
        if not clean:
            continue
        fastest = min(clean, key=lambda c: c.time.median)
        lean = [(r.memory_of(c.key), c) for c in clean if r.memory_of(c.key)]
        leanest = min(lean, key=lambda x: x[0].median, default=None)
        rows.append([w, f"{fastest.key[1]} on {fastest.key[3]}: {fastest.time.median:.3f} s",
                     "—" if leanest is None else f"{leanest[1].key[1]} on {leanest[1].key[3]}: "
                                                 f"{leanest[0].median / MIB:.1f} MiB in use"])
    s.p("Per workload, on a clean heap (Adv0): the fastest configuration (median time) and the leanest (the fewest "
        "pages in use in the memory runs, where the cell had them).")
    s.table(["workload", "fastest", "leanest"], rows)
    return s


def setup_section(r: Results) -> Section:
    meta = r.meta
    s = Section("setup", "Setup")
    m = meta.get("machine", {})
    cfg = meta.get("config", {})
    s.p(f"Config `{cfg.get('path')}` ({cfg.get('name')}): at least {cfg.get('runs')} runs per cell, interleaved in "
        f"shuffled rounds; every round draws its own preconditioning seed and pads the environment by a random "
        f"length (memory layout is sampled, not fixed); workload input seed {cfg.get('seed')}; timeout "
        f"{cfg.get('timeout_s')} s. Started {meta.get('started')}, took {meta.get('duration_seconds', '?')} s. "
        f"Commit {meta.get('git', {}).get('describe')}.")
    s.p(f"Machine: {m.get('cpu')}, {m.get('cores')} cores, {(m.get('memory_bytes') or 0) / 2**30:.1f} GiB, Linux "
        f"{m.get('kernel')}; load average at start {', '.join(f'{x:.2f}' for x in m.get('load_average_at_start', []))}.")
    s.p("Time is the program's own (from the end of preconditioning to exit, recorded by the preconditioner); CPU "
        "time (user + system) is recorded beside it in runs.csv. Peak RSS is the program's VmHWM at exit. Memory "
        "in use and fragmentation come from separate memory runs under the profiler (docs/lab.md).")
    s.table(["allocator", "library", "version"],
            [[a, v.get("library") or "(the C library)", v.get("version") or ""]
             for a, v in meta.get("allocators", {}).items()])
    if meta.get("skipped_allocators"):
        s.p("Skipped allocators (not installed or not built):")
        s.table(["allocator", "why, and how to get it"], [[a, t] for a, t in meta["skipped_allocators"].items()])
    if meta.get("not_applicable"):
        s.p("Modes a workload does not have (left out): " + ", ".join(meta["not_applicable"]) + ".")
    s.table(["workload", "program versions"],
            [[w, ", ".join(f"{k} {v}" for k, v in info.get("versions", {}).items())]
             for w, info in meta.get("workloads", {}).items() if info.get("versions")])
    s.table(["section", "workloads (scale)", "allocators", "modes", "presets", "runs", "cells"],
            [[e["section"], ", ".join(f"{w} ({e['scales'][w]})" for w in e["workloads"]), ", ".join(e["allocators"]),
              ", ".join(e["modes"]), ", ".join(e["presets"]), str(e["runs"]), str(e["cells"])]
             for e in meta.get("experiments", [])])
    return s


def failures_section(r: Results) -> Section:
    s = Section("failures", "Failed runs")
    bad = [run for run in r.runs + r.memory if not good(run)]
    bad_profiles = [p for p in r.profiles if p["status"] != "ok"]
    bad_bench = [b for b in r.bench + r.valgrind if b["status"] != "ok"]
    if not (bad or bad_profiles or bad_bench):
        s.p("None: every run exited normally with its workload's reference checksum.")
        return s
    s.p("Crashes, timeouts, non-zero exits and checksum mismatches: recorded, shown here, never averaged in.")
    s.table(["round", "workload", "mode", "scale", "allocator", "preset", "verdict", "detail"],
            [[str(x["round"]), x["workload"], x["mode"], str(x["scale"]), x["allocator"], x["preset"], x["verdict"],
              (f"checksum {x.get('checksum')} ≠ reference {x.get('reference')}" if x["verdict"] == "mismatch"
               else f"{x.get('exit_status') or ''} {x.get('stderr_tail') or ''}")[:200]] for x in bad])
    s.table(["profile", "error"], [[f"{p['workload']} {p['mode']} x{p['scale']}", (p.get("error") or "")[:200]]
                                   for p in bad_profiles])
    s.table(["benchmark", "contender", "status", "detail"],
            [[b.get("bench") or b.get("tool"), b.get("contender") or f"{b.get('workload')} {b.get('allocator')}",
              b["status"], (b.get("error") or "")[:200]] for b in bad_bench])
    return s
