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
        out += _no_data(left, top, plot_w, plot_h)
    else:
        xs = [x for _, pts in drawn for x, _ in pts]
        ys = [y for _, pts in drawn for _, y in pts]
        x_ticks = round_ticks(min(xs), max(xs), 7)
        y_ticks = round_ticks(min(0.0, min(ys)), max(ys), 6)
        plot = _Plot(left, top, plot_w, plot_h, x_ticks, y_ticks)
        out += _axes(plot, x_label, y_label, height)
        out += _curves(plot, drawn)
        out += _legend(plot, drawn)
    out.append("</svg>")
    return "\n".join(out)


@dataclass(frozen=True)
class _Plot:
    """The plot's area in pixels (inside the margins) and the ticks that bound its values."""

    left: int
    top: int
    width: int
    height: int
    x_ticks: list[float]
    y_ticks: list[float]

    def px(self, x: float) -> float:
        """The pixel column of the value ``x``."""
        x0, x1 = self.x_ticks[0], self.x_ticks[-1]
        return self.left + (x - x0) / (x1 - x0) * self.width

    def py(self, y: float) -> float:
        """The pixel row of the value ``y`` (SVG's rows grow downwards)."""
        y0, y1 = self.y_ticks[0], self.y_ticks[-1]
        return self.top + self.height - (y - y0) / (y1 - y0) * self.height


def _no_data(left: int, top: int, plot_w: int, plot_h: int) -> list[str]:
    """An empty frame that says "no data": a chart of nothing finite is still a chart."""
    return [
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" '
        'fill="none" stroke="#999"/>',
        f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h / 2:.1f}" '
        'text-anchor="middle" font-size="13" fill="#666">no data</text>',
    ]


def _axes(plot: _Plot, x_label: str, y_label: str, height: int) -> list[str]:
    """Grid lines and labels at the y ticks, marks and labels at the x ticks, the frame and
    the axis labels."""
    left, top, plot_w, plot_h = plot.left, plot.top, plot.width, plot.height
    out = []
    for y in plot.y_ticks:
        out.append(
            f'<line x1="{left}" y1="{plot.py(y):.1f}" x2="{left + plot_w}" y2="{plot.py(y):.1f}" '
            'stroke="#e5e5e5"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{plot.py(y) + 4:.1f}" text-anchor="end" '
            f'font-size="11" fill="#333">{tick_label(y)}</text>'
        )
    for x in plot.x_ticks:
        out.append(
            f'<line x1="{plot.px(x):.1f}" y1="{top + plot_h}" x2="{plot.px(x):.1f}" '
            f'y2="{top + plot_h + 4}" stroke="#333"/>'
        )
        out.append(
            f'<text x="{plot.px(x):.1f}" y="{top + plot_h + 17}" text-anchor="middle" '
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
    return out


def _curves(plot: _Plot, drawn: list[tuple[Series, list[tuple[float, float]]]]) -> list[str]:
    """Each series as a polyline in its colour, with a dot per point when it has few."""
    out = []
    for n, (s, pts) in enumerate(drawn):
        colour = COLOURS[n % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        coords = " ".join(f"{plot.px(x):.1f},{plot.py(y):.1f}" for x, y in pts)
        out.append(
            f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        if len(pts) <= 60:
            out.extend(
                f'<circle cx="{plot.px(x):.1f}" cy="{plot.py(y):.1f}" r="2.5" fill="{colour}"/>'
                for x, y in pts
            )
    return out


def _legend(plot: _Plot, drawn: list[tuple[Series, list[tuple[float, float]]]]) -> list[str]:
    """One line under the title, centred over the plot, so it never covers a curve."""
    out = []
    sizes = [text_width(s.name, 12) + 40 for s, _ in drawn]
    lx = plot.left + (plot.width - sum(sizes)) / 2
    for n, (s, _) in enumerate(drawn):
        colour = COLOURS[n % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        out.append(
            f'<line x1="{lx:.1f}" y1="38" x2="{lx + 24:.1f}" y2="38" '
            f'stroke="{colour}" stroke-width="2"{dash}/>'
        )
        out.append(f'<text x="{lx + 30:.1f}" y="42" font-size="12">{escape(s.name)}</text>')
        lx += sizes[n]
    return out


def inline_svg(svg: str) -> str:
    """The SVG for embedding in HTML5, which needs no namespace (and no URL in the page)."""
    return svg.replace(f" {SVG_NS}", "", 1)
