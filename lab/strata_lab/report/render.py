"""The report's two renderers, Markdown and self-contained HTML, from the same
sections: the first part (the answer), a table of contents, then each
section's blocks and, under a section with claims, its claims in a line each.

Every table goes through _prepare first, in both renderers: a column empty in
every row (blank, a dash, "not measured", "no pairs") is left out, and a
"no pairs" cell is explained once, under its table. In HTML a cell longer
than LONG characters folds into a <details>, a verdict becomes a CSS badge
(text, never a glyph a font may lack), and the claims table sorts and filters
with the inline script below (no network)."""
import base64
import html
import re
from pathlib import Path

from ..claims import VERDICTS
from . import claimview

EMPTY = {"", "—", "-", "not measured", "no pairs", "no data"}
NO_PAIRS = ("*no pairs*: no round has a good run of both cells of the pair (a cell this evaluation did not run, or "
            "whose every run failed), so there is no ratio.")
LONG = 300
CLAIMS_HEADER = ["verdict", "claim", "paper", "paper's figure", "ours (interval, level)", "reason"]
SECTION_CLAIMS_HEADER = ["verdict", "claim", "ours (interval, level)", "reason"]


def _prepare(header: list, rows: list) -> tuple:
    """(header, rows, notes): the columns with something in some row (the first always), and the notes owed."""
    rows = [[str(v) for v in row] for row in rows]
    keep = [i for i in range(len(header)) if i == 0 or any(row[i].strip() not in EMPTY for row in rows if i < len(row))]
    notes = [NO_PAIRS] if any(row[i] == "no pairs" for row in rows for i in keep if i < len(row)) else []
    return [header[i] for i in keep], [[row[i] if i < len(row) else "" for i in keep] for row in rows], notes


def _section_claim_rows(claims: list) -> list:
    return [[c.verdict, c.statement, claimview.ours_text(c), claimview.reason(c)] for c in claims]


def _claim_row(c) -> list:
    return [c.verdict, c.statement, claimview.short_paper(claimview.paper_key(c)), c.paper_figure or "",
            claimview.ours_text(c), claimview.reason(c)]


def _claim_details(c) -> list:
    """What a claim's row folds away: the quoted sentence, the quantity and criterion, every program's interval."""
    out = [("source", c.source.text()), ("quantity", c.quantity), ("criterion", c.criterion.text())]
    if len(c.estimates) > 1:
        out.append(("intervals", c.interval_text()))
    elif c.estimates:
        out.append(("interval", c.interval_text()))
    out += [(name, text) for name, text in (("outcome", c.outcome_text()), ("note", c.note), ("why", c.why),
                                            ("key", c.key)) if text]
    return out


def _toc(parts: list) -> list:
    return [(sec.key, sec.title) for sec in parts]


# ---------------------------------------------------------------------------
# Markdown.

def _md_cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_table(header: list, rows: list) -> list:
    header, rows, notes = _prepare(header, rows)
    out = ["| " + " | ".join(map(_md_cell, header)) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(map(_md_cell, row)) + " |" for row in rows]
    return out + [""] + [x for note in notes for x in (note, "")]


def _md_claims(claims: list) -> list:
    out = _md_table(CLAIMS_HEADER, [_claim_row(c) for c in claims])
    out += ["Each claim in full:", ""]
    for c in claims:
        out.append(f"- **{c.statement}** ({c.verdict}). " + " ".join(f"*{name}*: {text}."
                                                                      for name, text in _claim_details(c)))
    return out + [""]


def _md_block(block, folder: Path) -> list:
    if block[0] == "p":
        return [block[1], ""]
    if block[0] == "table":
        return _md_table(block[1], block[2])
    if block[0] == "img":
        return [f"![{block[2]}]({block[1].relative_to(folder)})", ""]
    if block[0] == "list":
        return [f"- {item}" for item in block[1]] + [""]
    if block[0] == "claims":
        return _md_claims(block[1])
    raise ValueError(f"unknown report block {block[0]!r}")


def to_markdown(title: str, parts: list, folder: Path) -> str:
    out = [f"# {title}", ""]
    for n, sec in enumerate(parts):
        out += [f'<a id="{sec.key}"></a>', f"## {sec.title}", ""]
        for block in sec.blocks:
            out += _md_block(block, folder)
        if sec.claims and sec.key != "claims":
            out += _md_table(SECTION_CLAIMS_HEADER, _section_claim_rows(sec.claims))
        if n == 0:
            out += ["Contents: " + " · ".join(f"[{t}](#{k})" for k, t in _toc(parts)), ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------
# HTML.

STYLE = ("body{font-family:'DejaVu Sans',sans-serif;max-width:1320px;margin:auto;padding:0.5em 1em;font-size:15px}"
         "h1{font-size:1.5em;margin:0.2em 0}h2{font-size:1.25em;margin:1em 0 0.4em}"
         "table{border-collapse:collapse;margin:0.4em 0 0.8em}td,th{border:1px solid #bbb;padding:2px 6px;"
         "font-size:0.85em;text-align:left;vertical-align:top}th{background:#eee}img{max-width:100%}"
         "nav{margin:0.5em 0 1em;font-size:0.85em}nav a{margin-right:1em}p{margin:0.4em 0}"
         ".badge{display:inline-block;padding:1px 7px;border-radius:9px;color:#fff;font-weight:bold;"
         "font-size:0.85em;white-space:nowrap}"
         ".v-held{background:#1a7f37}.v-not-held{background:#c62828}.v-inconclusive{background:#9a7400}"
         ".v-not-measured{background:#777}"
         "#glance p{margin:0.25em 0}#glance table td:not(:first-child),#glance table th:not(:first-child)"
         "{text-align:center;min-width:6.5em}#glance ul{margin:0.3em 0;padding-left:1.3em}#glance li{margin:0.2em 0}"
         ".note{font-size:0.8em;color:#444}details summary{cursor:pointer;color:#245}details{font-size:0.95em}"
         ".filters{margin:0.5em 0;font-size:0.9em}.filters select{margin:0 1em 0 0.3em}"
         "table.claims th{cursor:pointer}table.claims th[data-sort=asc]::after{content:' (up)'}"
         "table.claims th[data-sort=desc]::after{content:' (down)'}")

SCRIPT = """
(function () {
  var table = document.getElementById('claims-table');
  if (!table) return;
  var body = table.tBodies[0], selects = document.querySelectorAll('select[data-filter]');
  function apply() {
    var want = {}, shown = 0;
    selects.forEach(function (s) { want[s.getAttribute('data-filter')] = s.value; });
    Array.prototype.forEach.call(body.rows, function (tr) {
      var ok = (!want.paper || tr.dataset.paper === want.paper) &&
               (!want.verdict || tr.dataset.verdict === want.verdict) &&
               (!want.allocator || (' ' + tr.dataset.allocators + ' ').indexOf(' ' + want.allocator + ' ') >= 0);
      tr.hidden = !ok;
      if (ok) shown++;
    });
    document.getElementById('claims-count').textContent = shown + ' of ' + body.rows.length + ' claims shown';
  }
  selects.forEach(function (s) { s.addEventListener('change', apply); });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    th.addEventListener('click', function () {
      var up = th.dataset.sort !== 'asc';
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { delete h.dataset.sort; });
      th.dataset.sort = up ? 'asc' : 'desc';
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[i].dataset.key || a.cells[i].textContent, y = b.cells[i].dataset.key || b.cells[i].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return up ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  apply();
})();
"""


def _inline(text: str) -> str:
    escaped = html.escape(str(text))
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped)
    escaped = re.sub(r"\*(.+?)\*", r"<em>\1</em>", escaped)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)


def badge(verdict: str) -> str:
    return f'<span class="badge v-{verdict.replace(" ", "-")}">{html.escape(verdict)}</span>'


def _content(value) -> str:
    text = str(value)
    if text in VERDICTS:
        return badge(text)
    if len(text) > LONG:
        return f"<details><summary>{_inline(text[:120])}…</summary>{_inline(text)}</details>"
    return _inline(text)


def _html_table(header: list, rows: list) -> str:
    header, rows, notes = _prepare(header, rows)
    head = "".join(f"<th>{_content(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_content(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>" + \
        "".join(f'<p class="note">{_inline(n)}</p>' for n in notes)


def _select(name: str, label: str, values: list) -> str:
    options = "".join(f'<option value="{html.escape(v)}">{html.escape(text)}</option>' for v, text in values)
    return f'<label>{label}<select data-filter="{name}"><option value="">all</option>{options}</select></label>'


def _html_claims(claims: list, filters: bool, known_allocators: set) -> str:
    out = []
    if filters:
        papers = list(dict.fromkeys(claimview.paper_key(c) for c in claims))
        allocs = sorted({a for c in claims for a in claimview.allocators(c, known_allocators)})
        out.append('<div class="filters">' + _select("paper", "paper", [(k, claimview.short_paper(k)) for k in papers])
                   + _select("verdict", "verdict", [(v, v) for v in VERDICTS])
                   + _select("allocator", "allocator", [(a, a) for a in allocs])
                   + '<span id="claims-count"></span> (click a column to sort)</div>')
    head = "".join(f"<th>{html.escape(h)}</th>" for h in CLAIMS_HEADER)
    rows = []
    for c in claims:
        row = _claim_row(c)
        details = "".join(f"<p><strong>{name}</strong>: {_inline(text)}</p>" for name, text in _claim_details(c))
        cells = [f'<td data-key="{VERDICTS.index(c.verdict)}">{badge(c.verdict)}</td>',
                 f'<td data-key="{html.escape(c.statement)}">{_inline(c.statement)}'
                 f"<details><summary>quote, criterion, intervals</summary>{details}</details></td>"]
        cells += [f"<td>{_content(v)}</td>" for v in row[2:]]
        rows.append(f'<tr data-paper="{html.escape(claimview.paper_key(c))}" data-verdict="{c.verdict}" '
                    f'data-allocators="{" ".join(claimview.allocators(c, known_allocators))}">' + "".join(cells) + "</tr>")
    table_id = ' id="claims-table"' if filters else ""
    out.append(f'<table class="claims"{table_id}><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>')
    return "".join(out)


def _html_block(block, known_allocators: set) -> str:
    if block[0] == "p":
        return f"<p>{_inline(block[1])}</p>"
    if block[0] == "table":
        return _html_table(block[1], block[2])
    if block[0] == "img":
        data = base64.b64encode(Path(block[1]).read_bytes()).decode("ascii")
        return (f'<figure><img alt="{html.escape(block[2])}" src="data:image/png;base64,{data}">'
                f"<figcaption>{html.escape(block[2])}</figcaption></figure>")
    if block[0] == "list":
        return "<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in block[1]) + "</ul>"
    if block[0] == "claims":
        return _html_claims(block[1], block[2], known_allocators)
    raise ValueError(f"unknown report block {block[0]!r}")


def to_html(title: str, parts: list, known_allocators: set = frozenset()) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{html.escape(title)}</title>",
           f"<style>{STYLE}</style></head><body>", f"<h1>{html.escape(title)}</h1>"]
    for n, sec in enumerate(parts):
        out.append(f'<section id="{sec.key}"><h2>{html.escape(sec.title)}</h2>')
        out += [_html_block(block, known_allocators) for block in sec.blocks]
        if sec.claims and sec.key != "claims":
            out.append(_html_table(SECTION_CLAIMS_HEADER, _section_claim_rows(sec.claims)))
        out.append("</section>")
        if n == 0:
            out.append("<nav>Contents: " + "".join(f'<a href="#{k}">{html.escape(t)}</a>'
                                                   for k, t in _toc(parts)) + "</nav>")
    out.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(out) + "\n"
