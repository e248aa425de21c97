"""The hardening section's claims in each direction (test_claims_verdicts.py):
misuse.csv rows with known counts, and the workloads' times."""
from strata_lab.claims import HELD, INCONCLUSIVE, NOT_HELD
from strata_lab import misuse_suite
from synthetic import WIDE


def suite(allocator: str, caught: int, misuse: int = 30, clean: int = 11, correct: int = 11) -> list:
    """misuse.csv rows: programs p0..p{misuse-1}, the first `caught` caught; `clean` of `correct` clean."""
    rows = [{"program": f"misuse_p{i}", "kind": "misuse", "allocator": allocator,
             "outcome": misuse_suite.CAUGHT if i < caught else misuse_suite.MISSED,
             "signal": "SIGABRT" if i < caught else ""} for i in range(misuse)]
    return rows + [{"program": f"correct_c{i}", "kind": "correct", "allocator": allocator,
                    "outcome": misuse_suite.CLEAN if i < clean else misuse_suite.FAILED} for i in range(correct)]


def misuse(*suites):
    return lambda s: [s.misuse.extend(rows) for rows in suites]


def hardened_time(value: float, noise=None):
    return lambda s: [s.set(w, "naive", "strata-hardened", "Adv0", value, **({"noise": noise} if noise else {}))
                      for w in ("cfrac", "text")]


def scenarios() -> dict:
    return {
        "hardening.strata-catches-what-glibc-catches": {
            HELD: misuse(suite("glibc", 16), suite("strata", 17)),
            NOT_HELD: misuse(suite("glibc", 16), suite("strata", 15))},
        "hardening.strata-detection": {HELD: misuse(suite("strata", 16)), NOT_HELD: misuse(suite("strata", 15))},
        "hardening.strata-hardened-detection": {HELD: misuse(suite("strata-hardened", 28)),
                                                NOT_HELD: misuse(suite("strata-hardened", 27))},
        "hardening.no-false-alarm": {HELD: misuse(suite("glibc", 16), suite("strata", 7)),
                                     NOT_HELD: misuse(suite("glibc", 16), suite("strata", 7, clean=10))},
        "hardening.hardened-cost": {HELD: hardened_time(1.1), NOT_HELD: hardened_time(1.5),
                                    INCONCLUSIVE: hardened_time(1.25, WIDE)},
        "hardening.hardened-cheaper": {HELD: hardened_time(0.8), NOT_HELD: hardened_time(1.2),
                                       INCONCLUSIVE: hardened_time(1.0, WIDE)},
    }
