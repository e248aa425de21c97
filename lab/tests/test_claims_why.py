"""A claim's `why` is computed from the results where a paper gives the figure it departs by: the stand-ins'
allocation rate and peak live objects against the papers' programs."""
from strata_lab.report.results import Results
from strata_lab.report.sections import statistics
from synthetic import Synthetic


def test_why_gives_the_stand_ins_figures_against_the_papers(tmp_path):
    r = Results(Synthetic().write(tmp_path / "r"), draw=False)
    # Synthetic: cfrac profiles 1,000 objects, its naive run on glibc takes 1 s: slower than cfrac's (Heap Layers
    # Table 4: 1,207,862 memory operations per second, a malloc and a free per object)
    assert statistics.rate(r, "cfrac") == 1000
    slower = statistics.rate_why(r, ["cfrac"])
    assert "cfrac 0.0 M objects/s against cfrac's 0.60 M" in slower and "faster" not in slower
    # boxed-sim keeps 100 objects live at peak, 2002 Table 3's boxed-sim 4,865
    assert "boxed-sim 100 against boxed-sim's 4,865" in statistics.peak_why(r, ["boxed-sim"])
    # no figures for either side: the cause in words, with where to look
    assert "Statistics section" in statistics.rate_why(r, ["router"])
