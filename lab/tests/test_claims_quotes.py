"""Every claim quotes its paper verbatim, and every figure it gives as the paper's is in that paper.

The papers' text (docs/papers/) was extracted from PDFs, so both sides are normalised the same way before
matching, by these stated rules and no others (no list of exceptions):
  1. Unicode compatibility forms (NFKC: ligatures, subscripts such as Adv₃) and accents dropped (naïve);
  2. typographic quotes and dashes made ASCII;
  3. markdown escapes and emphasis (\\_, *, _) dropped;
  4. whitespace and hyphens dropped (the PDF text breaks words with a hyphen at a line's end, and the 2001
     paper's text lost many spaces between words: "between1/2%");
  5. a figure's or table's caption that the extraction put in the middle of a paragraph is cut out before
     matching (2002 §7: "mudlle [Figure 5's caption] (1.23)"); a quote may also be found in the text as it is.
A figure is each number in a claim's paper_figure (and in a section's quoted figure text); parts that are ours,
"margin: …" and "ours: …" up to the closing parenthesis, are left out. Each number must occur in the claim's paper
as a number (not inside a longer one)."""
import re
import tempfile
import unicodedata
from pathlib import Path

import pytest

from strata_lab import papers, report
from strata_lab.claims import bound, effect
from strata_lab.report.sections import per_class, statistics
from synthetic import Synthetic

CAPTION = re.compile(r"(?m)^\s*\**\s*(Figure|Table) \d+:.*?(\n\s*\n|\Z)", re.S)
OURS = re.compile(r"(margin|ours):[^)]*")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def normalised(text: str) -> str:
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = re.sub(r"[\u2018\u2019\u00b4`]", "'", text)
    text = re.sub(r"[\u201c\u201d]", '"', text)
    text = re.sub(r"\\(.)", r"\1", text)
    return re.sub(r"[\s*_\u2010-\u2015\u2212-]", "", text)


def paper_texts(key: str) -> tuple:
    raw = papers.PAPERS[key].text()
    return normalised(raw), normalised(CAPTION.sub("\n\n", raw))


def quoted(quote: str, key: str) -> bool:
    return any(normalised(quote) in text for text in paper_texts(key))


def figures(figure: str) -> list:
    """The numbers a figure text gives as the paper's (ours left out)."""
    return NUMBER.findall(OURS.sub("", figure))


def in_paper(number: str, key: str) -> bool:
    """The number occurs in the paper's text, not inside a longer one (a unit may follow: "2813K")."""
    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", papers.PAPERS[key].text()))
    return re.search(rf"(?<![\d.,]){re.escape(number)}(?![\d]|[.,]\d)", text) is not None


def test_every_claim_says_why_it_may_depart():
    missing = [c.key for c in all_claims() if not c.why.strip()]
    assert not missing, missing
    # one line, a cause, not the list of programs that break it
    assert all("\n" not in c.why and not c.why.startswith("breaks it") for c in all_claims())


def test_a_papers_figure_becomes_a_threshold_by_one_rule():
    assert effect(0.18) == pytest.approx(1.09) and effect(-0.39) == pytest.approx(0.805)
    assert bound(0.023) == pytest.approx(1.046) and bound(0.24) == pytest.approx(1.34)


def all_claims() -> list:
    with tempfile.TemporaryDirectory() as tmp:
        return report.claims_of(Synthetic().write(Path(tmp) / "r"))


CLAIMS = [c for c in all_claims() if not c.source.ours]


def test_the_normalisation_finds_what_extraction_garbled_and_nothing_else():
    assert quoted("Runtime of LeaHeap is between 1/2% faster and 20% slower than the Lea allocator", "2001")
    assert quoted("The programs with regions consistently exhibit more drag, including 176.gcc (1.16), and mudlle "
                  "(1.23), and lcc has high drag (3.34).", "2002")
    assert quoted("Although PHK_sc's changes in cache misses do not notably affect", "Vam 2005")
    assert not quoted("Runtime of LeaHeap is between 1/2% faster and 25% slower than the Lea allocator", "2001")
    assert not quoted("The programs with regions consistently exhibit less drag", "2002")
    assert figures("+62% (margin: more than 10%)") == ["62"]
    assert in_paper("3.34", "2002") and not in_paper("3.35", "2002") and not in_paper("3.3", "2002")


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.key for c in CLAIMS])
def test_every_quote_is_the_papers_sentence(claim):
    assert claim.source.paper in papers.PAPERS, claim.source.paper
    assert quoted(claim.source.quote, claim.source.paper), claim.source.quote


FIGURES = [(c.key, c.source.paper, n) for c in CLAIMS for n in figures(c.paper_figure)] + \
          [(f"per-class gain {a}", "2026", f"{g * 100:g}") for a, g in per_class.PAPER_GAIN.items()] + \
          [(f"allocation rate of {program}", "2001" if where.startswith("Heap Layers") else "Vam 2005",
            f"{rate * 2:,.0f}" if where.startswith("Heap Layers") else f"{rate / 1000:.0f}K")
           for program, rate, where in statistics.PAPER_RATES.values()]


@pytest.mark.parametrize("key,paper,number", FIGURES, ids=[f"{k}:{n}" for k, _, n in FIGURES])
def test_every_quoted_figure_is_in_the_paper(key, paper, number):
    assert in_paper(number, paper), f"{key}: {number} is not in {paper}"


def test_the_figures_checked_are_counted():
    # The report says how many: a figure text that loses its numbers would silently check nothing.
    assert len(FIGURES) >= 40, len(FIGURES)
