"""The paper registry: every paper a claim may name has its text in docs/papers/."""
from strata_lab import papers


def test_every_paper_has_its_text():
    for paper in papers.PAPERS.values():
        text = paper.text()
        assert len(text) > 5000, paper.key


def test_the_registry_names_every_paper_the_claims_quote():
    from strata_lab.claims import Source
    assert {"2001", "2002", "2002 slides", "Vam 2005", "2026"} <= set(papers.PAPERS)
    assert Source("2026", "§1", "x").paper in papers.PAPERS
