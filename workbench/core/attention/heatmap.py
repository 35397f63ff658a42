"""Cross-attention heatmaps: terminal text, SVG and PNG from one scale and one palette.

Users look at the heatmap over SSH, in tmux, piped into a file for a hand-in, in the TUI
and in the run report. So one layout feeds two text outputs: :func:`render_rich` (a Rich
``Text`` whose shades are coloured, for terminals and the TUI) and :func:`render_plain`
(a plain string with the same shade characters ``· ░ ▒ ▓ █`` minus the colour, for
NO_COLOR and pipes); :func:`heatmap_svg` (the report) and :func:`save_png` (``attention
--png``) colour their cells by the same fixed bands, so every form of one map agrees.

Widths are terminal cells (:func:`cell_width`), not characters: 茶 takes two cells,
so Chinese labels and English labels line up. Columns that do not fit the width are
printed as successive pages, each repeating the row labels, instead of being wrapped.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any
from xml.sax.saxutils import escape

import numpy as np

from workbench.core.views.svg import CJK_FONTS, svg_open, text_width
from workbench.core.views.wide import has_cjk, is_wide
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

#: What the bracket and the axes mean (the legend's last two lines), for cross-attention;
#: self-attention maps pass their own.
CROSS_AXES = ("[ ] strongest source token for each row", "rows: translation, columns: source")

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
        return text, f"{_ink(band)} on {PALETTE[band]}"
    return text, PALETTE[band]


def _ink(band: int) -> str:
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
    """``</s>``, padding, unknown and language labels (``>>cmn_Hans<<``) are drawn dim."""
    return label in ("</s>", "<pad>", "<unk>") or (label.startswith(">>") and label.endswith("<<"))


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


# --- figures -----------------------------------------------------------------------------


def heatmap_svg(
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    matrix: Sequence[Sequence[float]],
    *,
    title: str,
    cell: int = 42,
) -> str:
    """A grid of coloured cells: source tokens across the top, translation down the side.

    Each cell prints its share of the row's attention in percent, so the figure reads in
    greyscale too; the fill is the cell's band (the text heatmap's shades) and the
    strongest source token of each row gets a white frame.
    """
    rows, cols = len(row_labels), len(col_labels)
    values = [[float(v) for v in row] for row in matrix]
    if rows == 0 or cols == 0 or len(values) != rows or any(len(r) != cols for r in values):
        raise ValueError(f"heatmap needs a {rows}x{cols} matrix")
    label_size = 13
    row_w = max(text_width(r, label_size) for r in row_labels) + 16
    # Column labels are turned 45 degrees: they rise and lean right by width * sin 45.
    col_rise = max(text_width(c, label_size) for c in col_labels) * 0.71
    left = max(row_w, 60.0)
    top = 34 + col_rise + 16
    key_lines = (
        "cells: % of the row's attention · white frame: strongest source token",
        "rows: translation · columns: source",
    )
    legend_h = 20 + 18 * len(key_lines) + 8
    width = max(
        left + cols * cell + col_rise,
        text_width(title, 14) + 16,
        left + max(text_width(line, 11) for line in key_lines) + 16,
    )
    height = top + rows * cell + legend_h
    out = svg_open(width, height, title)
    out.append(f'<text x="8" y="20" font-size="14" font-weight="bold">{escape(title)}</text>')
    for j, label in enumerate(col_labels):
        x, y = left + j * cell + cell / 2, top - 8
        out.append(
            f'<text x="{x:.1f}" y="{y:.1f}" font-size="{label_size}" '
            f'transform="rotate(-45 {x:.1f} {y:.1f})">{escape(label)}</text>'
        )
    for i, label in enumerate(row_labels):
        y = top + i * cell + cell / 2 + 4.5
        out.append(
            f'<text x="{left - 8:.1f}" y="{y:.1f}" font-size="{label_size}" '
            f'text-anchor="end">{escape(label)}</text>'
        )
    for i, row in enumerate(values):
        fin = [v if math.isfinite(v) else -1.0 for v in row]
        strongest = fin.index(max(fin)) if max(fin) >= 0 else -1
        for j, value in enumerate(row):
            x, y = left + j * cell, top + i * cell
            shown = f"{round(value * 100)}" if math.isfinite(value) else ""
            ink = "#000000" if _ink(level(value)) == "black" else "#ffffff"
            tip = f"{row_labels[i]} ← {col_labels[j]}: {shown}%"
            out.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{cell}" height="{cell}" '
                f'fill="{figure_colour(value)}"><title>{escape(tip)}</title></rect>'
            )
            out.append(
                f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" '
                f'font-size="11" text-anchor="middle" fill="{ink}">{shown}</text>'
            )
            if j == strongest:
                out.append(
                    f'<rect x="{x + 1.5:.1f}" y="{y + 1.5:.1f}" width="{cell - 3}" '
                    f'height="{cell - 3}" fill="none" stroke="#ffffff" '
                    'stroke-width="2"/>'
                )
    # One swatch per band with its range, then what the numbers and the frame mean.
    bar_y = top + rows * cell + 12
    x = left
    for band, label in enumerate(band_labels()):
        fill = PALETTE[band] if band else FIGURE_BASE
        out.append(f'<rect x="{x:.1f}" y="{bar_y:.1f}" width="14" height="10" fill="{fill}"/>')
        out.append(
            f'<text x="{x + 18:.1f}" y="{bar_y + 9:.1f}" font-size="11">{escape(label)}%</text>'
        )
        x += 18 + text_width(f"{label}%", 11) + 12
    for n, line in enumerate(key_lines):
        out.append(
            f'<text x="{left:.1f}" y="{bar_y + 28 + 18 * n:.1f}" font-size="11" '
            f'fill="#444">{escape(line)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def find_cjk_font() -> str | None:
    """The name of an installed matplotlib font with Chinese glyphs, or None."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    for name in CJK_FONTS:
        if name in installed:
            return name
    return next((n for n in sorted(installed) if "CJK" in n), None)


def save_png(
    row_labels: list[str], col_labels: list[str], matrix: np.ndarray, path: str, title: str
) -> list[str]:
    """Draw the heatmap with matplotlib in the same bands and colours as the text and SVG.

    Returns notes for the user (e.g. a missing CJK font). matplotlib is an optional
    extra, imported here only.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import BoundaryNorm, ListedColormap
        from matplotlib.patches import Rectangle
    except ImportError:
        raise WorkbenchError(
            "--png needs matplotlib, which is not installed: "
            "pip install matplotlib (--svg needs nothing extra)"
        ) from None
    notes: list[str] = []
    if any(has_cjk(label) for label in [*row_labels, *col_labels]):
        font = find_cjk_font()
        if font:
            plt.rcParams["font.sans-serif"] = [font, *plt.rcParams["font.sans-serif"]]
            plt.rcParams["font.family"] = "sans-serif"
        else:
            notes.append(
                "no CJK font found, so Chinese labels in the PNG show as boxes; "
                "install one (e.g. apt install fonts-noto-cjk) or use --svg"
            )
    matrix = np.asarray(matrix, dtype=np.float64)
    rows, cols = matrix.shape
    colours = ListedColormap([FIGURE_BASE, *PALETTE[1:]])
    norm = BoundaryNorm([0.0, *THRESHOLDS, 1.0], colours.N)
    fig, ax = plt.subplots(
        figsize=(min(40, max(4, 0.55 * cols + 2.5)), min(40, max(3, 0.45 * rows + 2)))
    )
    image = ax.imshow(np.nan_to_num(matrix), cmap=colours, norm=norm, aspect="auto")
    ax.set_xticks(range(cols), labels=col_labels, rotation=60, ha="right")
    ax.set_yticks(range(rows), labels=row_labels)
    for i, row in enumerate(matrix):  # the strongest source per row
        if np.isfinite(row).any():
            j = int(np.nanargmax(row))
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="white", lw=1.5))
    ax.set_xlabel("source")
    ax.set_ylabel("translation")
    ax.set_title(title, fontsize=9)
    bar = fig.colorbar(image, ax=ax, label="share of the row's attention (%)")
    bounds = [0.0, *THRESHOLDS, 1.0]
    bar.set_ticks(bounds, labels=[f"{round(t * 100)}" for t in bounds])
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=150)
    except OSError as err:
        raise WorkbenchError(f"cannot write {path}: {err.strerror or err}") from None
    finally:
        plt.close(fig)
    return notes
