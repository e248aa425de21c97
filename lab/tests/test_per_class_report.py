"""The per-class section's upper bound (2026 §4.3, freelist16): beside the paired ratio, the work per object
the paper's gain implies on this machine, from the cells' own times."""
from strata_lab import report
from synthetic import SCALE, Synthetic


def test_the_upper_bound_table_gives_the_work_per_object_the_papers_gain_implies(tmp_path):
    s = Synthetic()
    s.set("freelist16", "custom", "glibc", "Adv0", 0.5)
    s.set("freelist16", "naive", "glibc", "Adv0", 2.5)
    path = s.write(tmp_path / "results")
    md = report.render(path)["md"].read_text()
    ns = 1e9 / (SCALE * 1_000_000)  # one second over the run's objects
    # custom 0.5 s, malloc and free add 2 s, and the paper's 24% needs (2 / 0.24 - 0.5) s of other work
    assert f"| {0.5 * ns:.1f} / {2 * ns:.1f} / {(2 / 0.24 - 0.5) * ns:.0f} |" in md
    assert "other work the paper's gain implies" in md
    verdicts = {c.key: c for c in report.claims_of(path)}
    assert verdicts["per-class.freelist16.glibc"].verdict == "not held"
    assert "exclusively measures allocation throughput" in verdicts["per-class.freelist16.glibc"].why
