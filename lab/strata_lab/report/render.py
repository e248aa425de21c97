"""The report's two renderers, Markdown and self-contained HTML, from the same
sections: a table of contents, then each section's blocks and, under a
section with claims, its claims with their verdicts."""
import base64
import html
import re
from pathlib import Path

from .overview import BADGE

CLAIMS_HEADER = ["verdict", "claim", "estimate (95% CI)"]


def _claim_rows(section) -> list:
    return [[BADGE[c.verdict], f"{c.statement} ({c.source.text()})", c.interval_text()] for c in section.claims]


def _toc(parts: list) -> list:
    return [(sec.key, sec.title) for sec in parts]


# ---------------------------------------------------------------------------
# Markdown.

def _md_cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_table(header: list, rows: list) -> list:
    out = ["| " + " | ".join(map(_md_cell, header)) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(map(_md_cell, row)) + " |" for row in rows]
    return out + [""]


def to_markdown(title: str, parts: list, folder: Path) -> str:
    out = [f"# {title}", "", "Contents: " + " · ".join(f"[{t}](#{k})" for k, t in _toc(parts)), ""]
    for sec in parts:
        out += [f'<a id="{sec.key}"></a>', f"## {sec.title}", ""]
        for block in sec.blocks:
            if block[0] == "p":
                out += [block[1], ""]
            elif block[0] == "table":
                out += _md_table(block[1], block[2])
            elif block[0] == "img":
                out += [f"![{block[2]}]({block[1].relative_to(folder)})", ""]
        if sec.claims and sec.key != "claims":
            out += _md_table(CLAIMS_HEADER, _claim_rows(sec))
    return "\n".join(out)


# ---------------------------------------------------------------------------
# HTML.

STYLE = ("body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}"
         "table{border-collapse:collapse;margin:0.5em 0 1em}td,th{border:1px solid #bbb;padding:2px 6px;"
         "font-size:0.85em;text-align:left;vertical-align:top}th{background:#eee}img{max-width:100%}"
         "nav{margin:0 0 1em}nav a{margin-right:1em}"
         ".held{color:#1a7f37;font-weight:bold}.not-held{color:#c62828;font-weight:bold}"
         ".inconclusive{color:#b58900;font-weight:bold}.not-measured{color:#777}")


def _inline(text: str) -> str:
    escaped = html.escape(str(text))
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped)
    escaped = re.sub(r"\*(.+?)\*", r"<em>\1</em>", escaped)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)


def _cell(value) -> str:
    verdict = next((v for v, badge in BADGE.items() if badge == str(value)), None)
    css = f' class="{verdict.replace(" ", "-")}"' if verdict else ""
    return f"<td{css}>{_inline(value)}</td>"


def _html_table(header: list, rows: list) -> str:
    head = "".join(f"<th>{_inline(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def to_html(title: str, parts: list) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{html.escape(title)}</title>",
           f"<style>{STYLE}</style></head><body>", f"<h1>{html.escape(title)}</h1>",
           "<nav>Contents: " + "".join(f'<a href="#{k}">{html.escape(t)}</a>' for k, t in _toc(parts)) + "</nav>"]
    for sec in parts:
        out.append(f'<h2 id="{sec.key}">{html.escape(sec.title)}</h2>')
        for block in sec.blocks:
            if block[0] == "p":
                out.append(f"<p>{_inline(block[1])}</p>")
            elif block[0] == "table":
                out.append(_html_table(block[1], block[2]))
            elif block[0] == "img":
                data = base64.b64encode(Path(block[1]).read_bytes()).decode("ascii")
                out.append(f'<figure><img alt="{html.escape(block[2])}" src="data:image/png;base64,{data}">'
                           f"<figcaption>{html.escape(block[2])}</figcaption></figure>")
        if sec.claims and sec.key != "claims":
            out.append(_html_table(CLAIMS_HEADER, _claim_rows(sec)))
    out.append("</body></html>")
    return "\n".join(out) + "\n"
