"""Attention heatmaps as figures for documents: an SVG (the report's, and ``attention
--svg``) and a PNG drawn with matplotlib (``attention --png``), in the terminal view's
colour bands so the three forms read alike."""

from __future__ import annotations

import math
from collections.abc import Sequence
from xml.sax.saxutils import escape

import numpy as np

#: A cell is at least 3 cells wide, so "100" fits in value mode and a shade reads as a block.
from workbench.core.attention.heatmap import (
    FIGURE_BASE,
    PALETTE,
    THRESHOLDS,
    band_ink,
    band_labels,
    figure_colour,
    level,
)
from workbench.core.views.svg import CJK_FONTS, svg_open, text_width
from workbench.core.views.wide import has_cjk
from workbench.errors import WorkbenchError


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
            ink = "#000000" if band_ink(level(value)) == "black" else "#ffffff"
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
