"""SVG figures for the run report, written by hand: line charts and the attention heatmap.

The report has to build offline on any machine the workbench runs on, with nothing extra
installed, and open the same in a browser, on GitHub and in a PDF. matplotlib is an
optional extra and plotext draws terminal text, so the few shapes a report needs
(axes, polylines, a grid of cells, labels) are written here as plain SVG text: one file
per figure that the markdown links to, and the same text inlined into the HTML.

Every value is checked before it is drawn: NaN and infinity are left out, never drawn
as a spike or a crash, and all text goes through :func:`xml.sax.saxutils.escape`.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from xml.sax.saxutils import escape, quoteattr

from workbench.core.events import finite_or_none

#: Latin fonts first, then fonts with Chinese glyphs on Linux, macOS and Windows: browsers
#: fall back glyph by glyph along the list, so 茶 comes from the first CJK font installed.
FONT_STACK = ("'Segoe UI', 'Helvetica Neue', Arial, 'Noto Sans CJK SC', 'Noto Sans SC', "
              "'Source Han Sans SC', 'Source Han Sans', 'PingFang SC', 'Hiragino Sans GB', "
              "'Microsoft YaHei', 'WenQuanYi Micro Hei', 'Droid Sans Fallback', sans-serif")
SVG_NS = 'xmlns="http://www.w3.org/2000/svg"'

#: Viridis at five stops (as matplotlib's), interpolated linearly between them: readable
#: in greyscale print and by most colour-blind readers.
VIRIDIS = ((0.0, (68, 1, 84)), (0.25, (59, 82, 139)), (0.5, (33, 145, 140)),
           (0.75, (94, 201, 98)), (1.0, (253, 231, 37)))
#: Line colours for up to four series (Okabe-Ito: distinct for colour-blind readers).
COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7")


@dataclass(frozen=True)
class Series:
    """One named line of (x, y) points; ``dashed`` for a secondary measure."""

    name: str
    points: Sequence[tuple[float, float]]
    dashed: bool = False


def finite_points(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points whose x and y are both finite numbers, in order."""
    kept = ((finite_or_none(x), finite_or_none(y)) for x, y in points)
    return [(fx, fy) for fx, fy in kept if fx is not None and fy is not None]


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (steps of 1, 2 or 5 times a power of ten) covering low..high."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0, 1.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value < high + step * 0.999:
        ticks.append(round(value, 10))
        value += step
    return ticks


def tick_label(value: float) -> str:
    """A tick value without trailing zeros (``2``, ``0.5``, ``1.25``)."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def text_width(text: str, size: float) -> float:
    """Approximate rendered width: wide (CJK) characters one em, others 0.6 em."""
    return sum(size * (1.0 if unicodedata.east_asian_width(ch) in ("W", "F") else 0.6)
               for ch in text)


def _svg_open(width: float, height: float, title: str) -> list[str]:
    return [
        f'<svg {SVG_NS} width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{FONT_STACK}" '
        f'role="img" aria-label={quoteattr(title)}>',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>',
    ]


def line_chart_svg(series: Sequence[Series], *, title: str, x_label: str, y_label: str,
                   width: int = 640, height: int = 320) -> str:
    """A line chart of the given series with axes, round ticks, labels and a legend.

    The y axis starts at 0 when every value is positive (losses, BLEU), so two charts
    of the same measure are comparable by eye. A series of at most 60 points gets a
    dot per point, so one epoch's value can be read off.
    """
    cleaned = [(s, finite_points(s.points)) for s in series]
    drawn = [(s, pts) for s, pts in cleaned if pts]
    left, right, top, bottom = 64, 20, 58, 48  # the legend sits between title and plot
    plot_w, plot_h = width - left - right, height - top - bottom
    out = _svg_open(width, height, title)
    out.append(f'<text x="{width / 2:.1f}" y="22" text-anchor="middle" font-size="15" '
               f'font-weight="bold">{escape(title)}</text>')
    if not drawn:
        out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" '
                   'fill="none" stroke="#999"/>')
        out.append(f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h / 2:.1f}" '
                   'text-anchor="middle" font-size="13" fill="#666">no data</text>')
        out.append("</svg>")
        return "\n".join(out)
    xs = [x for _, pts in drawn for x, _ in pts]
    ys = [y for _, pts in drawn for _, y in pts]
    x_ticks = nice_ticks(min(xs), max(xs), 6)
    y_ticks = nice_ticks(min(0.0, min(ys)), max(ys), 5)
    x0, x1 = x_ticks[0], x_ticks[-1]
    y0, y1 = y_ticks[0], y_ticks[-1]

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * plot_w

    def py(y: float) -> float:
        return top + plot_h - (y - y0) / (y1 - y0) * plot_h

    for y in y_ticks:
        out.append(f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + plot_w}" y2="{py(y):.1f}" '
                   'stroke="#e5e5e5"/>')
        out.append(f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end" '
                   f'font-size="11" fill="#333">{tick_label(y)}</text>')
    for x in x_ticks:
        out.append(f'<line x1="{px(x):.1f}" y1="{top + plot_h}" x2="{px(x):.1f}" '
                   f'y2="{top + plot_h + 4}" stroke="#333"/>')
        out.append(f'<text x="{px(x):.1f}" y="{top + plot_h + 17}" text-anchor="middle" '
                   f'font-size="11" fill="#333">{tick_label(x)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
               'stroke="#333"/>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 8}" text-anchor="middle" '
               f'font-size="12">{escape(x_label)}</text>')
    out.append(f'<text x="14" y="{top + plot_h / 2:.1f}" text-anchor="middle" font-size="12" '
               f'transform="rotate(-90 14 {top + plot_h / 2:.1f})">{escape(y_label)}</text>')
    for n, (s, pts) in enumerate(drawn):
        colour = COLOURS[n % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')
        if len(pts) <= 60:
            out.extend(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{colour}"/>'
                       for x, y in pts)
    # Legend: one line under the title, so it never covers a curve.
    sizes = [text_width(s.name, 12) + 40 for s, _ in drawn]
    lx = left + (plot_w - sum(sizes)) / 2
    for n, (s, _) in enumerate(drawn):
        colour = COLOURS[n % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        out.append(f'<line x1="{lx:.1f}" y1="38" x2="{lx + 24:.1f}" y2="38" '
                   f'stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{lx + 30:.1f}" y="42" font-size="12">{escape(s.name)}</text>')
        lx += sizes[n]
    out.append("</svg>")
    return "\n".join(out)


def viridis(t: float) -> str:
    """The viridis colour at ``t`` in 0..1 as ``#rrggbb`` (NaN counts as 0)."""
    t = 0.0 if not math.isfinite(t) else min(1.0, max(0.0, t))
    for (t0, c0), (t1, c1) in pairwise(VIRIDIS):
        if t <= t1:
            f = (t - t0) / (t1 - t0)
            rgb = [round(a + (b - a) * f) for a, b in zip(c0, c1, strict=True)]
            return "#{:02x}{:02x}{:02x}".format(*rgb)
    return "#{:02x}{:02x}{:02x}".format(*VIRIDIS[-1][1])


def heatmap_svg(row_labels: Sequence[str], col_labels: Sequence[str],
                matrix: Sequence[Sequence[float]], *, title: str, cell: int = 42) -> str:
    """A grid of coloured cells: source tokens across the top, translation down the side.

    Each cell prints its share of the row's attention in percent, so the figure reads in
    greyscale too; colour runs from 0 to the largest cell (as ``attention --png`` does)
    and the strongest source token of each row gets a white frame.
    """
    rows, cols = len(row_labels), len(col_labels)
    values = [[float(v) for v in row] for row in matrix]
    if rows == 0 or cols == 0 or len(values) != rows or any(len(r) != cols for r in values):
        raise ValueError(f"heatmap needs a {rows}x{cols} matrix")
    finite = [v for row in values for v in row if math.isfinite(v)]
    top_value = max(finite) if finite and max(finite) > 0 else 1.0
    label_size = 13
    row_w = max(text_width(r, label_size) for r in row_labels) + 16
    # Column labels are turned 45 degrees: they rise and lean right by width * sin 45.
    col_rise = max(text_width(c, label_size) for c in col_labels) * 0.71
    left = max(row_w, 60.0)
    top = 34 + col_rise + 16
    key_lines = ("cells: % of the row's attention · white frame: strongest source token",
                 "rows: translation · columns: source")
    legend_h = 20 + 18 * len(key_lines) + 8
    width = max(left + cols * cell + col_rise,
                text_width(title, 14) + 16,
                left + max(text_width(line, 11) for line in key_lines) + 16)
    height = top + rows * cell + legend_h
    out = _svg_open(width, height, title)
    out.append(f'<text x="8" y="20" font-size="14" font-weight="bold">{escape(title)}</text>')
    for j, label in enumerate(col_labels):
        x, y = left + j * cell + cell / 2, top - 8
        out.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{label_size}" '
                   f'transform="rotate(-45 {x:.1f} {y:.1f})">{escape(label)}</text>')
    for i, label in enumerate(row_labels):
        y = top + i * cell + cell / 2 + 4.5
        out.append(f'<text x="{left - 8:.1f}" y="{y:.1f}" font-size="{label_size}" '
                   f'text-anchor="end">{escape(label)}</text>')
    for i, row in enumerate(values):
        fin = [v if math.isfinite(v) else -1.0 for v in row]
        strongest = fin.index(max(fin)) if max(fin) >= 0 else -1
        for j, value in enumerate(row):
            x, y = left + j * cell, top + i * cell
            share = value / top_value if math.isfinite(value) else 0.0
            shown = f"{round(value * 100)}" if math.isfinite(value) else ""
            ink = "#000000" if share > 0.6 else "#ffffff"
            tip = f"{row_labels[i]} ← {col_labels[j]}: {shown}%"
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{cell}" height="{cell}" '
                       f'fill="{viridis(share)}"><title>{escape(tip)}</title></rect>')
            out.append(f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" '
                       f'font-size="11" text-anchor="middle" fill="{ink}">{shown}</text>')
            if j == strongest:
                out.append(f'<rect x="{x + 1.5:.1f}" y="{y + 1.5:.1f}" width="{cell - 3}" '
                           f'height="{cell - 3}" fill="none" stroke="#ffffff" '
                           'stroke-width="2"/>')
    # Colour bar with its two ends, then what the numbers and the frame mean.
    bar_y = top + rows * cell + 12
    steps = 20
    for k in range(steps):
        out.append(f'<rect x="{left + k * 8:.1f}" y="{bar_y:.1f}" width="8" height="10" '
                   f'fill="{viridis(k / (steps - 1))}"/>')
    out.append(f'<text x="{left - 6:.1f}" y="{bar_y + 9:.1f}" font-size="11" '
               'text-anchor="end">0%</text>')
    out.append(f'<text x="{left + steps * 8 + 6:.1f}" y="{bar_y + 9:.1f}" font-size="11">'
               f"{round(top_value * 100)}%</text>")
    for n, line in enumerate(key_lines):
        out.append(f'<text x="{left:.1f}" y="{bar_y + 28 + 18 * n:.1f}" font-size="11" '
                   f'fill="#444">{escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def inline_svg(svg: str) -> str:
    """The SVG for embedding in HTML5, which needs no namespace (and no URL in the page)."""
    return svg.replace(f" {SVG_NS}", "", 1)
