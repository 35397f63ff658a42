"""Cross-attention heatmaps as terminal text, from the scale and palette the figures share.

Users look at the heatmap over SSH, in tmux, piped into a file for a hand-in, in the TUI
and in the run report. So one layout feeds two text outputs: :func:`render_rich` (a Rich
``Text`` whose shades are coloured, for terminals and the TUI) and :func:`render_plain`
(a plain string with the same shade characters ``· ░ ▒ ▓ █`` minus the colour, for
NO_COLOR and pipes); :mod:`workbench.core.attention.figures` (the report's SVG, ``attention
--png``) colour their cells by the same fixed bands, so every form of one map agrees.

Widths are terminal cells (:func:`cell_width`), not characters: 茶 takes two cells,
so Chinese labels and English labels line up. Columns that do not fit the width are
printed as successive pages, each repeating the row labels, instead of being wrapped.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from workbench.core.attention.grid import CROSS_AXES, is_label
from workbench.core.views.wide import is_wide
from workbench.errors import WorkbenchError

#: A cell is at least 3 cells wide, so "100" fits in value mode and a shade reads as a block.
MIN_CELL = 3
#: Source labels longer than this are cut with "…": one long word must not eat the page.
MAX_COL_LABEL = 10
MAX_ROW_LABEL = 14
#: The narrowest width we lay out for; anything smaller gets this and scrolls sideways.
MIN_WIDTH = 40

#: Where each shade starts, as a share of the row's attention. Fixed, not scaled to the
#: matrix maximum: a model that spreads its attention evenly must not look as sure as one
#: that points at one word, and two screenshots must be comparable. Uneven steps because
#: a row over n tokens averages 1/n: 5% is already above average in a 20-token sentence.
THRESHOLDS = (0.05, 0.15, 0.30, 0.50)
#: Shades, weakest to strongest, one per band between the thresholds. Colour is
#: added on top of the shade rather than instead of it: on a 16-colour terminal Rich maps
#: a smooth palette onto one or two colours, and the shade still tells the levels apart.
SHADES = ("·", "░", "▒", "▓", "█")
#: Viridis stops for levels 1-4; they stay distinct when Rich maps them down to 16
#: colours (grey, cyan, green, yellow). Level 0 is a dim "·" so weak cells stay quiet.
PALETTE = ("", "#3b528b", "#21918c", "#5ec962", "#fde725")
#: Level 0 in the figures (SVG, PNG), where a cell needs a fill: viridis' dark end.
FIGURE_BASE = "#440154"

Segment = tuple[str, str]  # (text, Rich style; "" for none)
Line = list[Segment]


@dataclass(frozen=True)
class Layout:
    """Where everything goes: row label width, each column's width, the column pages."""

    row_width: int
    col_widths: list[int]
    pages: list[range]


def cell_width(text: str) -> int:
    """Terminal cells ``text`` takes: two for a wide (CJK) character, none for a combining
    mark, one for the rest (as terminals and Rich count them)."""
    return sum(0 if unicodedata.combining(ch) else 2 if is_wide(ch) else 1 for ch in text)


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` terminal cells (with "…") and padded to exactly that."""
    if cell_width(text) > width:
        out = ""
        for ch in text:
            if cell_width(out + ch) > width - 1:
                break
            out += ch
        text = out + "…"
    return text + " " * (width - cell_width(text))


def plan(row_labels: list[str], col_labels: list[str], width: int) -> Layout:
    """Measure labels and split the columns into pages that fit ``width`` cells."""
    width = max(width, MIN_WIDTH)
    row_width = min(MAX_ROW_LABEL, max([cell_width(r) for r in row_labels] + [4]))
    col_widths = [max(MIN_CELL, min(MAX_COL_LABEL, cell_width(c))) for c in col_labels]
    available = width - row_width - 1 - 1  # label, space, closing gap
    pages: list[range] = []
    start = used = 0
    for j, w in enumerate(col_widths):
        if j > start and used + w + 1 > available:
            pages.append(range(start, j))
            start, used = j, 0
        used += w + 1
    pages.append(range(start, len(col_widths)))
    return Layout(row_width, col_widths, pages)


def level(value: float) -> int:
    """The band (0..4) of a share of the row's attention; NaN counts as 0."""
    if not np.isfinite(value):
        return 0
    return sum(value >= t for t in THRESHOLDS)


def figure_colour(value: float) -> str:
    """The fill of a cell in the SVG and PNG figures: the band's palette colour."""
    band = level(value)
    return PALETTE[band] if band else FIGURE_BASE


def band_labels() -> list[str]:
    """``<5``, ``5–15``, ... ``50+``: the bands in percent, for every legend."""
    bounds = [round(t * 100) for t in THRESHOLDS]
    return [f"<{bounds[0]}", *(f"{a}–{b}" for a, b in pairwise(bounds)), f"{bounds[-1]}+"]


def _cell(value: float, width: int, colour: bool, values: bool) -> Segment:
    band = level(value)
    if values:
        text = f"{round(value * 100):>{width}d}"
    elif band == 0:
        text = fit(" " * ((width - 1) // 2) + "·", width)
    else:
        text = SHADES[band] * width
    if not colour:
        return text, ""
    if band == 0:
        return text, "dim"
    if values:  # numbers need a background to carry the colour
        return text, f"{band_ink(band)} on {PALETTE[band]}"
    return text, PALETTE[band]


def band_ink(band: int) -> str:
    """Text colour readable on a band's fill: dark on the bright bands."""
    return "black" if band >= 3 else "white"


def build_lines(
    row_labels: list[str],
    col_labels: list[str],
    matrix: np.ndarray,
    *,
    width: int = 80,
    colour: bool = False,
    values: bool = False,
    page: int | None = None,
    header: list[str] | None = None,
    axes: tuple[str, str] = CROSS_AXES,
) -> list[Line]:
    """The heatmap as lines of styled segments; both outputs are made from this.

    Rows are target tokens, columns source tokens. The strongest source token of each
    row is bracketed, ``[███]``, so the alignment reads without colour or a legend.
    ``page`` (1-based) prints one page of columns; None prints all of them in turn.
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.shape != (len(row_labels), len(col_labels)) or matrix.size == 0:
        raise WorkbenchError(
            f"heatmap matrix of shape {matrix.shape} does not match "
            f"{len(row_labels)} row and {len(col_labels)} column labels"
        )
    col_special = [is_special_label(c) for c in col_labels]
    row_special = [is_special_label(r) for r in row_labels]
    layout = plan(row_labels, col_labels, width)
    if page is not None and not 1 <= page <= len(layout.pages):
        raise WorkbenchError(
            f"page {page} does not exist: the columns fit on "
            f"{len(layout.pages)} page(s) at width {width}"
        )
    strongest = [int(np.nanargmax(r)) if np.isfinite(r).any() else -1 for r in matrix]
    lines: list[Line] = [[(text, "bold" if i == 0 else "")] for i, text in enumerate(header or [])]
    chosen = layout.pages if page is None else [layout.pages[page - 1]]
    for number, cols in enumerate(chosen, start=1 if page is None else page):
        if len(layout.pages) > 1:
            if number > 1 and page is None:
                lines.append([("", "")])
            lines.append(
                [
                    (
                        f"source tokens {cols.start + 1}–{cols.stop} of {len(col_labels)}"
                        f" (page {number}/{len(layout.pages)})",
                        "italic",
                    )
                ]
            )
        head: Line = [(" " * (layout.row_width + 1), "")]
        for j in cols:
            head.append(
                (
                    " " + fit(col_labels[j], layout.col_widths[j]),
                    "dim" if col_special[j] else "bold",
                )
            )
        lines.append(head)
        for i, label in enumerate(row_labels):
            row: Line = [(fit(label, layout.row_width) + " ", "dim" if row_special[i] else "bold")]
            for j in cols:
                gap = "[" if j == strongest[i] else "]" if j - 1 == strongest[i] else " "
                row.append((gap, "bold" if gap != " " else ""))
                row.append(_cell(matrix[i, j], layout.col_widths[j], colour, values))
            closing = "]" if cols.stop - 1 == strongest[i] else " "
            row.append((closing, "bold" if closing != " " else ""))
            lines.append(row)
    lines.extend(legend(colour, values, max(width, MIN_WIDTH), axes))
    return lines


def is_special_label(label: str) -> bool:
    """``</s>``, padding, unknown and language codes (``>>cmn_Hans<<``, ``zho_Hans``) are
    drawn dim."""
    return label in ("</s>", "<pad>", "<unk>") or is_label(label)


def legend(
    colour: bool, values: bool, width: int = 80, axes: tuple[str, str] = CROSS_AXES
) -> list[Line]:
    """What the shades mean, in percent of a row's attention, wrapped to ``width``."""
    items: list[Line] = []
    if values:
        items.append([("cells: % of the row's attention", "dim")])
    else:
        items.append([("shade = % of the row's attention:", "dim")])
        for band, label in enumerate(band_labels()):
            style = ("dim" if band == 0 else PALETTE[band]) if colour else ""
            items.append([(SHADES[band], style), (f" {label}", "")])
    lines = _pack(items, width)
    note = [[(axes[0], "dim")], [(axes[1], "dim")]]
    return lines + _pack(note, width)


def _pack(items: list[Line], width: int) -> list[Line]:
    """Lay items out left to right, two spaces apart, starting a new line where full."""
    lines: list[Line] = []
    used = 0
    for item in items:
        size = sum(cell_width(chunk) for chunk, _ in item)
        if lines and used + 2 + size <= width:
            lines[-1] += [("  ", ""), *item]
            used += 2 + size
        else:
            lines.append(list(item))
            used = size
    return lines


def render_plain(
    row_labels: list[str], col_labels: list[str], matrix: np.ndarray, **options: Any
) -> str:
    """The heatmap as plain characters (NO_COLOR, pipes, files); trailing spaces trimmed."""
    options["colour"] = False
    lines = build_lines(row_labels, col_labels, matrix, **options)
    return "\n".join("".join(chunk for chunk, _ in line).rstrip() for line in lines) + "\n"
