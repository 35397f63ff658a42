"""plotext charts that never see NaN/inf, never redraw thousands of points, and label
whole numbers (steps, counts) as whole numbers."""

from __future__ import annotations

import math
from typing import Any

from textual_plotext import PlotextPlot

from workbench.core.views.downsample import envelope
from workbench.core.views.ticks import finite_points, round_ticks

#: The cells a chart is taken to span before it is laid out (its width is 0 then). A chart
#: draws each cell's lowest and highest point: plotext redraws on the main thread, and
#: more points cost visible lag without showing more.
DEFAULT_CELLS = 150


def clean_series(
    xs: list[float], ys: list[float], cells: int = DEFAULT_CELLS
) -> tuple[list[float], list[float]]:
    """Drop non-finite points, then keep each cell's lowest and highest (:func:`envelope`)."""
    pairs = envelope(finite_points(zip(xs, ys, strict=False)), cells)
    return [p[0] for p in pairs], [p[1] for p in pairs]


def integer_ticks(low: float, high: float, most: int = 6) -> list[float]:
    """At most ``most`` whole-number ticks between ``low`` and ``high``, a round step apart.

    plotext spaces its own ticks evenly between the extremes and prints them as floats, so
    counts read ``994.0`` and steps ``14.2``; whole numbers should read as whole numbers.
    """
    return round_ticks(low, high, most, whole=True, within=True)


def all_whole(values: list[float]) -> bool:
    """Whether every value is a whole number (a step, a count), so ticks should be too."""
    return bool(values) and all(math.isfinite(v) and v == int(v) for v in values)


class SeriesChart(PlotextPlot):
    """A line chart of named series that grow point by point."""

    def __init__(self, title: str, xlabel: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.title = title
        self.xlabel = xlabel
        self.series: dict[str, tuple[list[float], list[float]]] = {}

    def add_point(self, name: str, x: float | None, y: float | None) -> bool:
        """Add a point if both values are finite numbers; returns whether it was kept."""
        kept = finite_points([(x, y)])
        if not kept:
            return False
        xs, ys = self.series.setdefault(name, ([], []))
        xs.append(kept[0][0])
        ys.append(kept[0][1])
        self.replot()
        return True

    def set_series(self, series: dict[str, list[tuple[float, float]]]) -> None:
        """Replace every series at once (a comparison of finished runs), one redraw."""
        self.series = {
            name: ([float(x) for x, _ in points], [float(y) for _, y in points])
            for name, points in series.items()
        }
        self.replot()

    def clear_series(self) -> None:
        """Forget every point (a new run starts)."""
        self.series.clear()
        self.replot()

    def point_count(self, name: str) -> int:
        """How many points a series holds (tests and status lines)."""
        return len(self.series.get(name, ([], []))[0])

    def replot(self) -> None:
        """Redraw from the stored series."""
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(self.title)
        plt.xlabel(self.xlabel)
        shown: list[float] = []
        cells = self.size.width or DEFAULT_CELLS
        for name, (xs, ys) in self.series.items():
            cx, cy = clean_series(xs, ys, cells)
            if cx:
                plt.plot(cx, cy, label=name, marker="braille")
                shown.extend(cx)
        if all_whole(shown):  # steps: 10, 20, 30 rather than 1.0, 14.2, 27.5
            plt.xticks(integer_ticks(min(shown), max(shown)))
        self.refresh()

    def on_mount(self) -> None:
        """Draw the chart, its title and axis label, before its first point arrives."""
        self.replot()
