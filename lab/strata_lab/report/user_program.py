"""The first screen of `strata-lab evaluate -- CMD` (or of a config's [[program]] in a "user-program"
experiment): for each of your programs, the fastest and the leanest allocator with intervals, its slowdown
under Adv3, its fragmentation, and whether a region or a reap could pay.

The region/reap advice reads the allocation profile (and strata-drag's figures with --drag):
  - under RARE objects a second of its time, allocation is not where the time goes: neither pays;
  - a region pays when the program frees few of its objects itself (they die together, at the end or a
    phase's end: the 2002 paper's lcc, mudlle), unless they drag (stay reachable long after their last use:
    a region would hold them longer still);
  - a reap pays when it frees most objects one by one but allocates many times its peak in small objects
    (the 2002 paper's case for reaps: region speed, and the freed objects reused);
  - otherwise it keeps what it allocates: a region would save little."""
import json

from .. import intervals
from .results import MIB, Results, Section, best_allocator, estimate, frag_text, mib, seconds

SECTION, MODE = "user-program", "naive"
RARE = 100_000          # objects a second below which allocation hardly shows in a program's time
FEW_FREED = 0.5         # frees per object below which most objects die together
CHURN = 4.0             # total bytes allocated / peak live bytes above which a reap's reuse pays
DRAG = 1.5              # in-use area / ideal area above which objects outstay their use (docs/drag.md)


def screens(r: Results) -> list:
    """One first-screen section per program of the user-program experiments ([] in the default report)."""
    names = []
    for e in r.experiments(SECTION):
        names += [w for w in e["workloads"] if w not in names]
    return [_screen(r, name) for name in names]


def _cells(r: Results, name: str, preset: str) -> dict:
    """allocator -> key of the program's cells at a preset that ran."""
    out = {}
    for e in r.experiments(SECTION):
        if name in e["workloads"] and preset in e["presets"]:
            for alloc in e["allocators"]:
                key = r.key(e, name, MODE, alloc, preset)
                if key in r.cells and r.cells[key].time is not None:
                    out.setdefault(alloc, key)
    return out


def _screen(r: Results, name: str) -> Section:
    command = r.meta.get("workloads", {}).get(name, {}).get("imitates", name)
    s = Section(f"program-{name}", f"Your program: {name}")
    s.p(f"{command}. {r.timing.why}")
    clean = _cells(r, name, "Adv0")
    if not clean:
        s.p("**No good run**: every run of the program failed (see Failed runs below).")
        return s
    s.p(_fastest(r, clean) + " " + _leanest(r, clean))
    base = clean.get("glibc")
    rows = []
    for alloc, key in clean.items():
        cell = r.cells[key]
        vs = estimate(intervals.ratio(r.ratios(key, base))) if base and alloc != "glibc" else "—"
        rows.append([alloc, seconds(cell.time), vs, mib(r.memory_of(key)), mib(cell.rss),
                     frag_text(r.fragmentation_of(key))])
    s.table(["allocator", "time (median, range)", "time / glibc (paired, 95% CI)", "peak memory in use",
             "peak RSS", "fragmentation (in use / live)"], rows)
    s.p(_adversarial(r, name, clean))
    s.p(_fragmentation(r, clean))
    s.p(_region_or_reap(r, name, clean))
    return s


def _fastest(r: Results, clean: dict) -> str:
    name, scale = next(iter(clean.values()))[0], next(iter(clean.values()))[2]
    best = best_allocator(r, name, MODE, scale, list(clean))
    others = [a for a in clean if a != best]
    if not others:
        return f"**Fastest**: {best} (the only allocator that ran)."
    parts = []
    for other in others:
        q = intervals.ratio(r.ratios(clean[best], clean[other]))
        parts.append(f"{other} {estimate(q)}")
    second = sorted(others, key=lambda a: r.cells[clean[a]].time.median)[0]
    q = intervals.ratio(r.ratios(clean[best], clean[second]))
    sure = q is not None and q.high < 1.0
    verdict = (f"faster than every other, its lead over the runner-up {second} beyond the interval" if sure else
               f"but its lead over {second} is within the interval: either will do")
    return f"**Fastest**: {best}, {verdict} (time {best} / other, paired, 95% CI: {'; '.join(parts)})."


def _leanest(r: Results, clean: dict) -> str:
    measured = {a: r.memory_of(k) for a, k in clean.items() if r.memory_of(k) is not None}
    metric, what = "peak_in_use_bytes", "peak memory in use (memory runs)"
    if not measured:
        measured = {a: r.cells[k].rss for a, k in clean.items() if r.cells[k].rss is not None}
        metric, what = None, "peak RSS (no memory runs)"
    if not measured:
        return "**Leanest**: not measured."
    best = min(measured, key=lambda a: measured[a].median)
    text = f"**Leanest**: {best}, {mib(measured[best])} {what}"
    second = sorted((a for a in measured if a != best), key=lambda a: measured[a].median)[:1]
    if second and metric:
        q = intervals.ratio(r.memory_ratios(clean[best], clean[second[0]], metric))
        sure = q is not None and q.high < 1.0
        text += (f"; against the next, {second[0]}: {estimate(q)}"
                 + ("" if sure else " (within the interval: either is as lean)"))
    return text + "."


def _adversarial(r: Results, name: str, clean: dict) -> str:
    hostile = _cells(r, name, "Adv3")
    if not hostile:
        return "**Under Adv3** (a heap fragmented as by a long-running program, 2026 Table 3): not run."
    parts = [f"{a} {estimate(intervals.ratio(r.ratios(k, clean[a])))}" for a, k in hostile.items() if a in clean]
    return ("**Under Adv3** (its heap preconditioned as a long-running program's, 2026 Table 3), its slowdown "
            "Adv3/Adv0 (paired, 95% CI): " + "; ".join(parts) + ". Above 1.05 the program is sensitive to "
            "fragmentation on that allocator: prefer one that stays near 1.")


def _fragmentation(r: Results, clean: dict) -> str:
    frag = {a: r.fragmentation_of(k) for a, k in clean.items() if r.fragmentation_of(k) is not None}
    if not frag:
        return "**Fragmentation**: not measured (no memory runs)."
    worst = max(frag, key=lambda a: frag[a].median)
    least = min(frag, key=lambda a: frag[a].median)
    return (f"**Fragmentation** (peak memory in use / peak live bytes, memory runs; 1 = none): from "
            f"{frag_text(frag[least])} on {least} to {frag_text(frag[worst])} on {worst}.")


def _profile(r: Results, name: str):
    return next((p for p in r.profiles if p["workload"] == name and p["status"] == "ok"), None)


def _drag(r: Results, name: str):
    path = r.folder / "drag" / name / "drag.json"
    return json.loads(path.read_text()) if path.is_file() else None


def _region_or_reap(r: Results, name: str, clean: dict) -> str:
    p = _profile(r, name)
    if p is None or not p["total_objects"]:
        return "**Region or reap**: no allocation profile (the profiler's run failed or the program allocates nothing)."
    objects, freed = p["total_objects"], min(1.0, (p["free_calls"] or 0) / p["total_objects"])
    key = clean.get("glibc") or next(iter(clean.values()))
    rate = objects / r.cells[key].time.median if r.cells[key].time.median else float("inf")
    churn = p["total_to_peak_bytes"] or 0.0
    facts = (f"{objects:,} objects of {p['average_size']:.0f} B on average, {rate:,.0f} a second, "
             f"{freed:.0%} freed by the program, {churn:.1f}× its peak live bytes allocated in all")
    drag = _drag(r, name)
    dragging = drag is not None and drag.get("total_drag") is not None and drag["total_drag"] > DRAG
    if drag is not None and drag.get("total_drag") is not None:
        facts += f"; object drag {drag['total_drag']:.2f} (in-use area / ideal, strata-drag)"
    if rate < RARE:
        advice = ("neither is likely to pay: allocation is too rare to show in its time; choose the allocator "
                  "from the table above")
    elif freed < FEW_FREED and not dragging:
        advice = ("a region could pay: most objects are never freed one by one but die together, which a region "
                  "frees at once after allocating each by a pointer bump (2002 §2: lcc, mudlle)")
    elif freed < FEW_FREED:
        advice = ("a region would allocate fast but its objects already outstay their use (drag): a region would "
                  "hold them longer still; a reap, which frees them one by one, is the safer choice")
    elif churn > CHURN and p["average_size"] <= 256:
        advice = ("a reap could pay: it frees its small objects one by one and allocates many times its peak, "
                  "which a reap serves at region speed while reusing the freed objects (2002 §4)")
    else:
        advice = ("neither is likely to pay much: it keeps most of what it allocates live (a region would save "
                  "little) and a general-purpose allocator already reuses what it frees")
    return f"**Region or reap**: {advice}. From its profile{' and drag' if drag else ''}: {facts}."


__all__ = ["screens", "MIB"]
