"""The papers strata's claims quote: the key a claim's Source names, the
full citation a reader sees, and the text (docs/papers/) a test checks every
quoted sentence and figure against."""
from dataclasses import dataclass

from . import paths

PAPERS_DIR = paths.REPO_ROOT / "docs" / "papers"


@dataclass(frozen=True)
class Paper:
    key: str        # as Source.paper names it
    title: str
    authors: str
    venue: str
    file: str       # in docs/papers/

    @property
    def citation(self) -> str:
        return f"{self.authors}: {self.title} ({self.venue})"

    def text(self) -> str:
        return (PAPERS_DIR / self.file).read_text(encoding="utf-8")


PAPERS = {p.key: p for p in (
    Paper("2001", "Composing High-Performance Memory Allocators", "Berger, Zorn, McKinley", "PLDI 2001",
          "2001-heap-layers-composing-allocators.txt"),
    Paper("2002", "Reconsidering Custom Memory Allocation", "Berger, Zorn, McKinley", "OOPSLA 2002",
          "2002-reconsidering-custom-memory-allocation-reaps.md"),
    Paper("2002 slides", "Reconsidering Custom Memory Allocation (lecture slides)", "Berger, Zorn, McKinley",
          "OOPSLA 2002 talk", "2002-reaps-lecture-slides.txt"),
    Paper("Vam 2005", "A Locality-Improving Dynamic Memory Allocator", "Feng, Berger", "MSP 2005",
          "2005-vam-locality-improving-allocator.md"),
    Paper("2026", "Reconsidering \u201cReconsidering Custom Memory Allocation\u201d", "van Kempen, Berger",
          "ISMM 2026", "2026-reconsidering-reconsidering-adversarial-allocation.md"),
)}
