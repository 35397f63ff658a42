"""plotext charts as plain characters, for terminal output, pipes and logs alike.

No colour codes: the same text reads the same in a terminal, a log file and a report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workbench.core.views.ticks import finite_points, round_ticks


def plain_chart(draw: Callable[[Any], None], width: int = 72, height: int = 16) -> str:
    """A plotext chart drawn by ``draw(plt)``, as plain characters."""
    import plotext as plt

    plt.clear_figure()
    plt.plot_size(width, height)
    plt.theme("clear")
    draw(plt)
    return str(plt.uncolorize(plt.build()))


def line_chart_text(
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    title: str,
    x_label: str,
    width: int = 72,
    height: int = 16,
) -> str:
    """Overlaid lines, one per ``(label, points)``; non-finite points are left out and an
    empty series is not drawn (plotext fails on NaN and on no data)."""
    cleaned = []
    for label, points in series:
        kept = finite_points(points)
        if kept:
            cleaned.append((label, kept))

    def draw(plt: Any) -> None:
        plt.title(title)
        plt.xlabel(x_label)
        for label, points in cleaned:
            plt.plot([x for x, _ in points], [y for _, y in points], label=label, marker="braille")
        xs = [x for _, points in cleaned for x, _ in points]
        # Round ticks (epochs 1, 5, 10) instead of plotext's evenly spaced floats.
        plt.xticks(round_ticks(min(xs), max(xs), 7, within=True))

    if not cleaned:
        return f"{title}: no data"
    return plain_chart(draw, width, height)
