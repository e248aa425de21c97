"""The first screen's parts, chosen by rules from the results: the scorecard
counts each paper's verdicts, the findings name the strongest confirmation and
the largest departure, and the recommendation follows the fastest allocator."""
from strata_lab import report
from strata_lab.claims import VERDICTS, tally
from strata_lab.papers import PAPERS
from strata_lab.report import claimview, glance
from synthetic import Synthetic


def judged(tmp_path, s: Synthetic):
    r = report.Results(s.write(tmp_path / "r"), draw=False)
    return r, [c for sec in report.build(r) for c in sec.claims]


def test_the_scorecard_counts_every_papers_verdicts(tmp_path):
    r, claims = judged(tmp_path, Synthetic())
    rows = glance.scorecard(claims)
    assert rows[-1][0].startswith("ours")
    for row in rows[:-1]:
        key = next(k for k, p in PAPERS.items() if row[0] == claimview.paper_label(k))
        counts = tally([c for c in claims if claimview.paper_key(c) == key])
        assert row[1:] == [str(counts[v]) for v in VERDICTS]
    assert sum(int(x) for row in rows for x in row[1:]) == len(claims)


def test_findings_follow_the_results(tmp_path):
    s = Synthetic()
    s.set("freelist16", "naive", "glibc", "Adv0", 3.0)        # 200% against the paper's 24%: the largest departure
    for key in s.times:                                        # mimalloc fastest wherever it runs, by half
        if key[3] == "mimalloc":
            s.times[key] = [t * 0.5 for t in s.times[key]]
    s.set("boxed-sim", "custom", "mimalloc", "Adv0", 0.25)    # its own allocator: twice as fast as malloc/free
    r, claims = judged(tmp_path, s)
    found = glance.findings(r, claims)
    departures = [f for f in found if f.startswith("**Departs**")]
    assert departures and "freelist gains at most 24%" in departures[0] and "Ours: 3" in departures[0]
    assert any(f.startswith("**Confirmed**") for f in found)
    assert found[-1].startswith("**strata recommends:** mimalloc as malloc") and "% less time than glibc" in found[-1]
    assert "for programs like boxed-sim, its custom allocator gains 100% over malloc/free on mimalloc" in found[-1]
    assert 3 <= len(found) <= 5
