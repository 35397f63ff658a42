"""Document helpers for the report and the comparison: markdown and HTML tables of
escaped cells, and the one stylesheet of their self-contained HTML pages.

Everything that came from a user or a model is escaped here: console input can hold
``<script>`` or Rich markup like ``[/bold]``, and must show as typed."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from workbench.core.views.svg import FONT_STACK

_MD_SPECIAL = re.compile(r"([\\`*\[\]|]|(?<!\w)_|_(?!\w))")


def escape_markdown(text: Any) -> str:
    """Text safe in a markdown table cell: no HTML, no formatting, no line breaks."""
    escaped = html.escape(str(text), quote=False)
    return _MD_SPECIAL.sub(r"\\\1", " ".join(escaped.split()))


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured markdown table; cells are escaped here."""
    lines = [
        "| " + " | ".join(escape_markdown(h) for h in header) + " |",
        "|" + "|".join(" --- " for _ in header) + "|",
    ]
    lines += [
        "| " + " | ".join(escape_markdown(c) if c else " " for c in row) + " |" for row in rows
    ]
    return lines


CSS = f"""
:root {{ color-scheme: light; }}
body {{ font-family: {FONT_STACK}; margin: 2rem auto; max-width: 62rem; padding: 0 1rem;
       color: #1a1a1a; line-height: 1.45; }}
h1 {{ font-size: 1.6rem; margin-bottom: .2rem; }}
h2 {{ font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }}
.meta, .caption {{ color: #555; font-size: .9rem; }}
.note {{ background: #fff6d6; border-left: 4px solid #e0b000; padding: .5rem .8rem; }}
table {{ border-collapse: collapse; margin: .6rem 0; font-size: .92rem; }}
th, td {{ border: 1px solid #ccc; padding: .3rem .55rem; text-align: left;
         vertical-align: top; }}
td {{ overflow-wrap: anywhere; min-width: 4.5rem; }}
th {{ background: #f2f4f7; }}
th[scope="row"] {{ font-weight: normal; white-space: nowrap; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
tr.best td {{ font-weight: bold; background: #eef7ee; }}
td.judgement {{ min-width: 14rem; border-bottom: 2px dashed #999; background: #fcfcf6; }}
figure {{ margin: 1rem 0; overflow-x: auto; }}
figure svg {{ max-width: 100%; height: auto; }}
figure.heatmap svg {{ max-width: none; }}
@media print {{ body {{ margin: 0; max-width: none; }} h2 {{ break-after: avoid; }}
  figure, tr {{ break-inside: avoid; }} }}
"""

_NUMERIC = re.compile(r"^[-+–]?[\d,]*\.?\d*$|^–$|^✓$")


def escape_html(text: Any) -> str:
    """HTML-escaped text."""
    return html.escape(str(text), quote=True)


def html_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    row_classes: Sequence[str] | None = None,
    judgement: bool = False,
    numeric: bool = True,
) -> str:
    """A table of escaped cells; numbers right-aligned; ``judgement``: the last cell
    editable, to fill in or correct.

    An all-empty header makes a key/value table: no header row, the first column as
    row headings.
    """
    keyed = not any(header)
    out = ["<table>"]
    if not keyed:
        out.append(
            "<thead><tr>" + "".join(f"<th>{escape_html(c)}</th>" for c in header) + "</tr></thead>"
        )
    out.append("<tbody>")
    for n, row in enumerate(rows):
        cls = f' class="{row_classes[n]}"' if row_classes and row_classes[n] else ""
        cells = []
        for m, cell in enumerate(row):
            if keyed and m == 0:
                cells.append(f'<th scope="row">{escape_html(cell)}</th>')
            elif judgement and m == len(row) - 1:
                cells.append(
                    f'<td class="judgement" contenteditable="true">{escape_html(cell)}</td>'
                )
            elif numeric and cell and _NUMERIC.match(cell):
                cells.append(f'<td class="num">{escape_html(cell)}</td>')
            else:
                cells.append(f"<td>{escape_html(cell)}</td>")
        out.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def html_page(title: str, body: Sequence[str]) -> str:
    """A self-contained HTML page: the stylesheet inline, the non-empty ``body`` parts in
    order; nothing is loaded from anywhere, so it opens offline and prints as is."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{escape_html(title)}</title>",
            f"<style>{CSS}</style>",
            "</head>",
            "<body>",
            *[part for part in body if part],
            "</body>",
            "</html>",
            "",
        ]
    )
