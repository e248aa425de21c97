"""report.html in a real browser (Debian's headless Chromium): the first
1400 x 900 holds the scorecard and the findings, every image loads, no badge
draws a missing glyph, and the claims table filters and sorts offline. A
report rendered from synthetic results (the smoke evaluation is too slow for
the suite). Chromium missing fails: make setup installs it."""
import pytest

from browser import page_of
from strata_lab import report
from strata_lab.papers import PAPERS
from synthetic import Synthetic

# Every character of every badge drawn in the badge's font, against a code point no font has (U+10FFFD: private
# use): identical pixels are a missing glyph (a box, or nothing).
MISSING_GLYPHS = """() => {
  const canvas = document.createElement('canvas');
  canvas.width = 64; canvas.height = 48;
  const g = canvas.getContext('2d');
  const draw = (text, font) => { g.clearRect(0, 0, 64, 48); g.font = font; g.fillText(text, 8, 32);
                                 return g.getImageData(0, 0, 64, 48).data.join(','); };
  const badges = Array.from(document.querySelectorAll('.badge'));
  const missing = [];
  for (const b of badges) {
    const font = getComputedStyle(b).font, none = draw('\\u{10FFFD}', font);
    for (const ch of b.textContent) if (ch.trim() && draw(ch, font) === none) missing.push(b.textContent + ': ' + ch);
  }
  return {badges: badges.length, missing: missing, probe: draw('A', getComputedStyle(document.body).font) !==
          draw('\\u{10FFFD}', getComputedStyle(document.body).font)};
}"""


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    s = Synthetic()
    s.set("freelist16", "naive", "glibc", "Adv0", 4.0)      # the largest departure: 4x against the paper's 24%
    s.set("boxed-sim", "naive", "mimalloc", "Adv0", 1.02)   # a confirmation
    folder = s.write(tmp_path_factory.mktemp("browser") / "results")
    return report.render(folder)["html"], report.claims_of(folder)


def test_the_first_screen_holds_the_scorecard_and_the_findings(rendered):
    html, claims = rendered
    with page_of(html) as page:
        height = page.viewport_size["height"]
        for selector in ("#glance table", "#glance ul"):
            box = page.locator(selector).bounding_box()
            assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height, (selector, box)
        scorecard = page.locator("#glance table").inner_text()
        quoted = {c.source.paper for c in claims if not c.source.ours}
        for key in quoted:
            assert PAPERS[key].title in scorecard and PAPERS[key].venue in scorecard, key
        findings = page.locator("#glance ul li").all_inner_texts()
        assert 3 <= len(findings) <= 5, findings
        assert any(f.startswith("Confirmed") for f in findings) and any(f.startswith("Departs") for f in findings)
        assert any("freelist gains at most 24%" in f for f in findings if f.startswith("Departs")), findings
        assert findings[-1].startswith("strata recommends:")


def test_every_image_loads_and_no_badge_misses_a_glyph(rendered):
    html, claims = rendered
    with page_of(html) as page:
        images = page.eval_on_selector_all("img", "els => els.map(e => [e.complete, e.naturalWidth, e.alt, "
                                                  "e.naturalHeight])")
        assert len(images) >= 8 and all(done and width > 0 for done, width, _, _ in images), images
        # a forest plot per paper (and ours), each readable at its size; the paper against measurement figure
        forests = [(alt, height) for _, _, alt, height in images if alt.startswith("the claims of ")]
        papers = {c.source.paper for c in claims}
        assert len(forests) >= len(papers) and all(height <= 1200 for _, height in forests), forests
        assert any(alt.startswith("the paper's figure against ours") for _, _, alt, _ in images)
        glyphs = page.evaluate(MISSING_GLYPHS)
        assert glyphs["probe"], "the probe cannot tell a glyph from a missing one"
        assert glyphs["badges"] >= len(claims) and glyphs["missing"] == [], glyphs


def test_the_claims_table_filters_and_sorts_offline(rendered):
    html, claims = rendered
    held = sum(c.verdict == "held" for c in claims)
    with page_of(html) as page:
        rows = page.locator("#claims-table tbody tr")
        assert rows.count() == len(claims)
        assert page.locator("#claims-count").inner_text() == f"{len(claims)} of {len(claims)} claims shown"
        page.select_option("select[data-filter=verdict]", "held")
        shown = page.eval_on_selector_all("#claims-table tbody tr:not([hidden])", "rs => rs.map(r => r.dataset.verdict)")
        assert shown == ["held"] * held and held > 0
        page.select_option("select[data-filter=verdict]", "")
        page.select_option("select[data-filter=allocator]", "jemalloc")
        allocs = page.eval_on_selector_all("#claims-table tbody tr:not([hidden])", "rs => rs.map(r => r.dataset.allocators)")
        assert allocs and all("jemalloc" in a.split() for a in allocs)
        page.select_option("select[data-filter=allocator]", "")
        page.click("#claims-table th:nth-child(2)")   # by claim, ascending
        order = """rs => { const keys = rs.map(r => r.cells[1].dataset.key);
                           const sorted = keys.slice().sort((a, b) => a.localeCompare(b));
                           return [keys.join('\\n') === sorted.join('\\n'), keys.join('\\n') === sorted.reverse().join('\\n')]; }"""
        assert page.eval_on_selector_all("#claims-table tbody tr", order) == [True, False]
        page.click("#claims-table th:nth-child(2)")   # again: descending
        assert page.eval_on_selector_all("#claims-table tbody tr", order) == [False, True]
        # no claims cell outside a <details> over 300 characters
        longest = page.evaluate("""() => Math.max(...Array.from(document.querySelectorAll('#claims-table td')).map(td => {
            const copy = td.cloneNode(true); copy.querySelectorAll('details').forEach(d => d.remove());
            return copy.textContent.length; }))""")
        assert longest <= 300
