"""plotext charts that never see NaN/inf and never redraw thousands of points."""

from __future__ import annotations

import math

from textual_plotext import PlotextPlot

MAX_POINTS = 300  # plotext redraws on the main thread; more points cost visible lag


def clean_series(xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    """Drop non-finite points, then keep at most MAX_POINTS evenly spaced ones."""
    pairs = [(x, y) for x, y in zip(xs, ys, strict=False) if math.isfinite(x) and math.isfinite(y)]
    if len(pairs) > MAX_POINTS:
        step = len(pairs) / MAX_POINTS
        pairs = [pairs[int(i * step)] for i in range(MAX_POINTS - 1)] + [pairs[-1]]
    return [p[0] for p in pairs], [p[1] for p in pairs]


class SeriesChart(PlotextPlot):
    """A line chart of named series that grow point by point."""

    def __init__(self, title: str, xlabel: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.title = title
        self.xlabel = xlabel
        self.series: dict[str, tuple[list[float], list[float]]] = {}

    def add_point(self, name: str, x: float | None, y: float | None) -> bool:
        """Add a point if both values are finite numbers; returns whether it was kept."""
        if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)):
            return False
        xs, ys = self.series.setdefault(name, ([], []))
        xs.append(float(x))
        ys.append(float(y))
        self.replot()
        return True

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
        for name, (xs, ys) in self.series.items():
            cx, cy = clean_series(xs, ys)
            if cx:
                plt.plot(cx, cy, label=name, marker="braille")
        self.refresh()

    def on_mount(self) -> None:
        self.replot()
