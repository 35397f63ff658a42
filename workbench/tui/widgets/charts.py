"""plotext charts that never see NaN/inf, never redraw thousands of points, and label
whole numbers (steps, counts) as whole numbers."""

from __future__ import annotations

import math
from typing import Any

from textual_plotext import PlotextPlot

from workbench.core.events import EvalDone, Event, TrainStep
from workbench.core.views.ticks import finite_points, round_ticks

MAX_POINTS = 300  # plotext redraws on the main thread; more points cost visible lag


def clean_series(xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    """Drop non-finite points, then keep at most MAX_POINTS evenly spaced ones."""
    pairs = finite_points(zip(xs, ys, strict=False))
    if len(pairs) > MAX_POINTS:
        step = len(pairs) / MAX_POINTS
        pairs = [pairs[int(i * step)] for i in range(MAX_POINTS - 1)] + [pairs[-1]]
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


def charted(e: EvalDone) -> bool:
    """Whether the BLEU chart shows this evaluation: it follows the validation set, as the
    test set is scored before and after only."""
    return e.stage in ("before", "epoch") and e.split == "validation"


Series = dict[str, list[tuple[float, float]]]


def replayed_series(events: list[Event]) -> tuple[Series, Series]:
    """A run's recorded events as the loss chart's and the BLEU chart's series."""
    loss: list[tuple[float, float]] = []
    bleu: list[tuple[float, float]] = []
    chrf: list[tuple[float, float]] = []
    for event in events:
        if isinstance(event, TrainStep) and event.loss is not None:
            loss.append((float(event.step), event.loss))
        elif isinstance(event, EvalDone) and charted(event):
            bleu += [(event.epoch, event.bleu)] if event.bleu is not None else []
            chrf += [(event.epoch, event.chrf)] if event.chrf is not None else []
    return {"loss": loss}, {"BLEU": bleu, "chrF": chrf}


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
        for name, (xs, ys) in self.series.items():
            cx, cy = clean_series(xs, ys)
            if cx:
                plt.plot(cx, cy, label=name, marker="braille")
                shown.extend(cx)
        if all_whole(shown):  # steps: 10, 20, 30 rather than 1.0, 14.2, 27.5
            plt.xticks(integer_ticks(min(shown), max(shown)))
        self.refresh()

    def on_mount(self) -> None:
        """Draw the chart, its title and axis label, before its first point arrives."""
        self.replot()
