"""SVG written by hand: the shared primitives, and the line charts of the run report.

The report has to build offline on any machine the workbench runs on, with nothing extra
installed, and open the same in a browser, on GitHub and in a PDF. matplotlib is an
optional extra and plotext draws terminal text, so the few shapes a report needs
(axes, polylines, labels) are written here as plain SVG text: one file per figure that
the markdown links to, and the same text inlined into the HTML. The attention heatmap's
SVG is drawn in :mod:`workbench.core.attention.heatmap`, with its text and PNG forms.

Every value is checked before it is drawn (:func:`~workbench.core.views.ticks.finite_points`,
the ticks from :func:`~workbench.core.views.ticks.round_ticks`): NaN and infinity are left
out, never drawn as a spike or a crash, and all text goes through
:func:`xml.sax.saxutils.escape`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from workbench.core.views.downsample import envelope
from workbench.core.views.ticks import finite_points, round_ticks, tick_label
from workbench.core.views.wide import is_wide

#: Fonts that carry Chinese glyphs, most common first (Linux, macOS, Windows): the SVG
#: font stack and the PNG heatmap's font search both read this list.
CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "Source Han Sans",
    "PingFang SC",
    "Hiragino Sans GB",
    "Microsoft YaHei",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Droid Sans Fallback",
    "Heiti SC",
    "SimHei",
    "Arial Unicode MS",
)
#: Latin fonts first, then the CJK ones: browsers fall back glyph by glyph along the
#: list, so 茶 comes from the first CJK font installed.
FONT_STACK = (
    ", ".join(f"'{name}'" for name in ("Segoe UI", "Helvetica Neue", "Arial", *CJK_FONTS))
    + ", sans-serif"
)
SVG_NS = 'xmlns="http://www.w3.org/2000/svg"'

#: Line colours for up to four series (Okabe-Ito: distinct for colour-blind readers).
COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7")


@dataclass(frozen=True)
class Series:
    """One named line of (x, y) points; ``dashed`` for a secondary measure."""

    name: str
    points: Sequence[tuple[float, float]]
    dashed: bool = False


def text_width(text: str, size: float) -> float:
    """Approximate rendered width: wide (CJK) characters one em, others 0.6 em."""
    return sum(size * (1.0 if is_wide(ch) else 0.6) for ch in text)


def svg_open(width: float, height: float, title: str) -> list[str]:
    """The opening lines of a standalone SVG: size, fonts, title and a white background."""
    return [
        f'<svg {SVG_NS} width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{FONT_STACK}" '
        f'role="img" aria-label={quoteattr(title)}>',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>',
    ]


def line_chart_svg(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    width: int = 640,
    height: int = 320,
) -> str:
    """A line chart of the given series with axes, round ticks, labels and a legend.

    The y axis starts at 0 when every value is positive (losses, BLEU), so two charts
    of the same measure are comparable by eye. A series of at most 60 points gets a
    dot per point, so one epoch's value can be read off.
    """
    left, right, top, bottom = 64, 20, 58, 48  # the legend sits between title and plot
    plot_w, plot_h = width - left - right, height - top - bottom
    # A pixel column's lowest and highest point: a 300,000-step loss is ~1,100 points.
    cleaned = [(s, envelope(finite_points(s.points), plot_w)) for s in series]
    drawn = [(s, pts) for s, pts in cleaned if pts]
    out = svg_open(width, height, title)
    out.append(
        f'<text x="{width / 2:.1f}" y="22" text-anchor="middle" font-size="15" '
        f'font-weight="bold">{escape(title)}</text>'
    )
    if not drawn:
        out.append(
            f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" '
            'fill="none" stroke="#999"/>'
        )
        out.append(
            f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h / 2:.1f}" '
            'text-anchor="middle" font-size="13" fill="#666">no data</text>'
        )
        out.append("</svg>")
        return "\n".join(out)
    xs = [x for _, pts in drawn for x, _ in pts]
    ys = [y for _, pts in drawn for _, y in pts]
    x_ticks = round_ticks(min(xs), max(xs), 7)
    y_ticks = round_ticks(min(0.0, min(ys)), max(ys), 6)
    x0, x1 = x_ticks[0], x_ticks[-1]
    y0, y1 = y_ticks[0], y_ticks[-1]

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * plot_w

    def py(y: float) -> float:
        return top + plot_h - (y - y0) / (y1 - y0) * plot_h

    for y in y_ticks:
        out.append(
            f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + plot_w}" y2="{py(y):.1f}" '
            'stroke="#e5e5e5"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end" '
            f'font-size="11" fill="#333">{tick_label(y)}</text>'
        )
    for x in x_ticks:
        out.append(
            f'<line x1="{px(x):.1f}" y1="{top + plot_h}" x2="{px(x):.1f}" '
            f'y2="{top + plot_h + 4}" stroke="#333"/>'
        )
        out.append(
            f'<text x="{px(x):.1f}" y="{top + plot_h + 17}" text-anchor="middle" '
            f'font-size="11" fill="#333">{tick_label(x)}</text>'
        )
    out.append(
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>'
    )
    out.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 8}" text-anchor="middle" '
        f'font-size="12">{escape(x_label)}</text>'
    )
    out.append(
        f'<text x="14" y="{top + plot_h / 2:.1f}" text-anchor="middle" font-size="12" '
        f'transform="rotate(-90 14 {top + plot_h / 2:.1f})">{escape(y_label)}</text>'
    )
    for n, (s, pts) in enumerate(drawn):
        colour = COLOURS[n % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(
            f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        if len(pts) <= 60:
            out.extend(
                f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{colour}"/>'
                for x, y in pts
            )
    # Legend: one line under the title, so it never covers a curve.
    sizes = [text_width(s.name, 12) + 40 for s, _ in drawn]
    lx = left + (plot_w - sum(sizes)) / 2
    for n, (s, _) in enumerate(drawn):
        colour = COLOURS[n % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        out.append(
            f'<line x1="{lx:.1f}" y1="38" x2="{lx + 24:.1f}" y2="38" '
            f'stroke="{colour}" stroke-width="2"{dash}/>'
        )
        out.append(f'<text x="{lx + 30:.1f}" y="42" font-size="12">{escape(s.name)}</text>')
        lx += sizes[n]
    out.append("</svg>")
    return "\n".join(out)


def inline_svg(svg: str) -> str:
    """The SVG for embedding in HTML5, which needs no namespace (and no URL in the page)."""
    return svg.replace(f" {SVG_NS}", "", 1)
