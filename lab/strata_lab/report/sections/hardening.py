"""Hardening (issue 19): which heap misuses each allocator stops (the misuse
suite, tests/misuse, in misuse.csv), against what its safety costs in time
and memory on the workloads (the hardening experiment's cells)."""
from ... import intervals, misuse_suite
from ...claims import Below, Claim, Source
from ...measurements import read_csv
from .. import plots
from ..results import TIME, Results, Section, against_glibc

STRATA, HARDENED, GLIBC = "strata", "strata-hardened", "glibc"
# Issue 19's goals, on its independent suite of 30: default libstrata catches at least 16, the hardened build 28.
GOALS = {STRATA: 16, HARDENED: 28}
GOAL_OF = 30
LABELS = {STRATA: "default libstrata", HARDENED: "libstrata-hardened"}
HARDENED_COST = 1.25     # libstrata-hardened's time within 1.25x of default libstrata's
HARDENED_BELOW = ["scudo", "mimalloc-secure"]   # "below scudo, mimalloc secure and hardened_malloc"


def build(r: Results) -> Section:
    s = Section("hardening", "Hardening: misuse caught against its cost")
    rows = read_csv(r.folder / "misuse.csv")
    e = next(iter(r.experiments(misuse_suite.SECTION)), None)
    if rows:
        s.p("The misuse suite (tests/misuse): each program does one heap misuse and exits 0 if nothing stops it; it "
            "is caught when a signal stops it (SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGTRAP). A read after free is "
            "caught when the freed bytes no longer hold the program's secret (zeroed, filled or unmapped). n/a: the "
            "misused API is absent (free_sized). The correct programs use the same APIs legally and must run clean. "
            "One run per program and allocator (`strata-lab misuse`, docs/lab.md).")
    s.table(["allocator", "misuse caught", "not applicable", "correct programs clean", "time / glibc (95% CI)",
             "peak RSS / glibc (95% CI)"], _summary(r, e, rows))
    _plot(r, s, e, rows)
    for kind in ("misuse", "correct"):
        s.table(*misuse_suite.detail_rows(rows, kind))
    if e is not None:
        s.p("The cost: each allocator on the workloads (naive mode), against glibc, paired within a round. "
            + r.timing.why)
        s.table(["workload", "allocator", "time", "time / glibc (95% CI)", "peak RSS", "most pages in use",
                 "fragmentation"], against_glibc(r, e)[1])
    _detection_claims(s, misuse_suite.tally(rows), rows)
    _cost_claims(r, s, e)
    return s


def _cost(r: Results, e, allocator: str, metric: str):
    """Geometric mean over the workloads of allocator / glibc, paired by round."""
    if e is None or allocator not in e["allocators"] or GLIBC not in e["allocators"]:
        return None
    mode = e["modes"][0]
    return intervals.geometric_mean_across([r.ratios(r.key(e, w, mode, allocator, "Adv0"),
                                                 r.key(e, w, mode, GLIBC, "Adv0"), metric) for w in e["workloads"]])


def _summary(r: Results, e, rows: list) -> list:
    table = []
    for name, line in zip(misuse_suite.tally(rows), misuse_suite.summary_rows(rows)):
        time, rss = _cost(r, e, name, TIME), _cost(r, e, name, "peak_rss_bytes")
        table.append(line + ["—" if time is None else time.text(), "—" if rss is None else rss.text()])
    return table


def _plot(r: Results, s: Section, e, rows: list) -> None:
    points = {}
    for name, c in misuse_suite.tally(rows).items():
        time = _cost(r, e, name, TIME)
        if time is not None and c["misuse"]:
            points[name] = [(time.value, c[misuse_suite.CAUGHT] / c["misuse"])]
    if points:
        s.img(plots.scatter(r.plot_path("hardening"), "misuse caught against time on the workloads",
                            "time / glibc (geometric mean over workloads)", "fraction of misuse caught", points),
              "detection against cost")


def _missed_fraction(counts: dict, name: str):
    c = counts.get(name)
    if not c or not c["misuse"]:
        return None
    return intervals.exact((c["misuse"] - c[misuse_suite.CAUGHT]) / c["misuse"], c["misuse"])


def _detection_claims(s: Section, counts: dict, rows: list) -> None:
    caught = {(x["program"], x["allocator"]) for x in rows if x["outcome"] == misuse_suite.CAUGHT}
    programs = list(dict.fromkeys(x["program"] for x in rows if x["kind"] == "misuse"))
    glibc_only = [p for p in programs if (p, GLIBC) in caught and (p, STRATA) not in caught]
    claim = Claim("hardening.strata-catches-what-glibc-catches", s.title,
                  "default libstrata catches every misuse of the suite that glibc catches",
                  Source("ours", "", "issue 19: a user who preloads libstrata must not lose glibc's checks"),
                  "misuse programs glibc catches and libstrata does not", Below(0), "16/30 for glibc, 7/30 for "
                  "libstrata before (issue 19's independent suite)",
                  why="default libstrata checks only what its fast path can check for free; the misuses it lets "
                      "pass are the ones the hardened build is for")
    if GLIBC in counts and STRATA in counts:
        claim.estimates[STRATA] = intervals.exact(len(glibc_only))
        claim.note = "missed by libstrata: " + ", ".join(p.split("_", 1)[1] for p in glibc_only) if glibc_only else ""
    s.claim(claim)
    for name, goal in GOALS.items():
        goal_claim = s.claim(Claim(
            f"hardening.{name}-detection", s.title,
            f"{LABELS[name]} catches at least {goal} of every {GOAL_OF} misuses",
            Source("ours", "", f"issue 19's goal on its independent suite: at least {goal}/{GOAL_OF}"),
            f"fraction of the applicable misuse programs {LABELS[name]} misses (at most {GOAL_OF - goal}/{GOAL_OF})",
            Below((GOAL_OF - goal) / GOAL_OF), f"{goal}/{GOAL_OF} caught",
            why="a misuse the allocator cannot see from its own metadata (an overflow inside a block, a read after "
                "free) needs checks this build does not make",
            estimates={name: _missed_fraction(counts, name)}))
        if name in counts:
            goal_claim.note = f"{counts[name][misuse_suite.CAUGHT]}/{counts[name]['misuse']} caught"
    clean = Claim("hardening.no-false-alarm", s.title, "no allocator stops a correct program",
                  Source("ours", "", "issue 19: no false alarm on any test, workload or real program"),
                  "per allocator: correct programs that do not run clean", Below(0), "11/11 clean",
                  why="an allocator that stops a correct program has a check that is wrong (see the table's row)",
                  every=len(counts) > 1)
    for name, c in counts.items():
        if c["correct"]:
            clean.estimates[name] = intervals.exact(c["correct"] - c[misuse_suite.CLEAN], c["correct"])
    s.claim(clean)


def _cost_claims(r: Results, s: Section, e) -> None:
    mode = e["modes"][0] if e else "naive"
    key = lambda w, a: r.key(e, w, mode, a, "Adv0")
    cost = Claim("hardening.hardened-cost", s.title, "libstrata-hardened's time is within 1.25x of libstrata's",
                 Source("ours", "", "issue 19's goal (there on bench/malloc; here on the workloads)"),
                 f"geometric mean over workloads of libstrata-hardened / libstrata {r.timing.name}",
                 Below(HARDENED_COST),
                 "≤ 1.25x", why="the hardened checks run on every free and on the stand-ins' high allocation "
                                "rates (Statistics section) they weigh more than on a program's own work")
    cheaper = Claim("hardening.hardened-cheaper", s.title, "libstrata-hardened is faster than scudo and mimalloc's "
                    "secure build", Source("ours", "", "issue 19's goal: below scudo, mimalloc secure and "
                                                       "hardened_malloc (there on bench/malloc)"),
                    f"per peer: geometric mean over workloads of libstrata-hardened / the peer's {r.timing.name}",
                    Below(1.0, strict=True), "below them",
                    why="the peers' hardening differs in what it checks; a peer that checks less can be faster")
    present = set(e["allocators"]) if e else set()
    for claim, others in ((cost, [STRATA]), (cheaper, HARDENED_BELOW)):
        others = [o for o in others if o in present]
        if HARDENED in present and others:
            confidence = intervals.corrected(intervals.CONFIDENCE, len(others))
            for other in others:
                claim.cells.update(key(w, a) for w in e["workloads"] for a in (HARDENED, other))
                claim.estimates[f"/ {other}"] = intervals.geometric_mean_across(
                    [r.ratios(key(w, HARDENED), key(w, other)) for w in e["workloads"]], confidence)
            claim.every = len(others) > 1
        s.claim(claim)
