"""Points downsampled to the cells a chart fills, keeping the curve's envelope.

A run that logged 300,000 steps has 300,000 loss points; a terminal chart is a hundred
cells wide and an SVG plot 556 pixels. Drawing every point costs seconds (plotext redraws
on the TUI's main thread) and megabytes of SVG, and shows nothing more: each cell can
show only its lowest and highest value. Keeping evenly spaced points instead hides
exactly the spikes a user looks for (a loss that blew up for a few steps), so each cell
keeps its lowest and its highest point, in x order, and the series' first and last points
are always kept (the newest loss of a live run is the one watched).
"""

from __future__ import annotations

from collections.abc import Sequence

Point = tuple[float, float]


def envelope(points: Sequence[Point], cells: int) -> list[Point]:
    """At most ``2 * cells + 2`` of ``points``: per cell of the x range,
    the lowest and the highest point, in x order, plus the first and the last point.
    Fewer points than that come back as they are."""
    if cells < 1 or len(points) <= 2 * cells + 2:
        return list(points)
    low, high = min(p[0] for p in points), max(p[0] for p in points)
    if high <= low:  # one x for every point: its lowest and highest, its first and last
        return sorted({points[0], min(points, key=_y), max(points, key=_y), points[-1]})
    scale = cells / (high - low)
    lowest: list[Point | None] = [None] * cells
    highest: list[Point | None] = [None] * cells
    for point in points:
        cell = min(int((point[0] - low) * scale), cells - 1)  # the highest x: the last cell
        least, most = lowest[cell], highest[cell]
        if least is None or point[1] < least[1]:
            lowest[cell] = point
        if most is None or point[1] > most[1]:
            highest[cell] = point
    kept = {points[0], points[-1]}
    kept.update(p for p in lowest if p is not None)
    kept.update(p for p in highest if p is not None)
    return sorted(kept)


def _y(point: Point) -> float:
    return point[1]
