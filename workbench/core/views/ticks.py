"""Axis ticks and the points a chart may draw: one algorithm for every chart the workbench
draws, the report's SVG, the TUI's plotext charts and the terminal's text charts.

A chart library spaces its ticks evenly between the extremes and prints them as floats
(``14.2``, ``994.0``); a reader wants round steps, and whole numbers (steps, counts) as
whole numbers. And a NaN or an infinity must never be drawn: a diverged loss would draw
as a spike, or fail the chart outright.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from workbench.core.records.scores import finite_or_none

#: Round steps: each times 1, 10, 100, … (and 0.1, 0.01, … for fractions), smallest first.
ROUND_STEPS = (1.0, 2.0, 2.5, 5.0)


def finite_points(points: Iterable[tuple[float | None, float | None]]) -> list[tuple[float, float]]:
    """The points whose x and y are both finite numbers, in order: the one filter every
    chart draws through."""
    kept = ((finite_or_none(x), finite_or_none(y)) for x, y in points)
    return [(fx, fy) for fx, fy in kept if fx is not None and fy is not None]


def round_ticks(
    low: float, high: float, most: int = 6, *, whole: bool = False, within: bool = False
) -> list[float]:
    """At most ``most`` ticks a round step apart (1, 2, 2.5 or 5 times a power of ten),
    the smallest such step.

    By default the ticks enclose ``low..high`` (an axis drawn from its first tick to its
    last, as the SVG charts are: at least two ticks, a flat series widened to a span);
    ``within``: they lie inside it (an axis drawn to the data, as plotext draws it), none
    when ``high < low``. ``whole``: whole-number steps only (steps, counts), the ticks as
    ints, which plotext prints without ``.0``. Non-finite bounds give no ticks.
    """
    if not (math.isfinite(low) and math.isfinite(high)) or most < 1 or (within and high < low):
        return []
    if not within and high <= low:
        high = low + (abs(low) or 1.0)
    span = high - low
    power = 1.0 if whole or span == 0 else 10.0 ** math.floor(math.log10(span / most))
    while True:
        for multiple in ROUND_STEPS:
            step = multiple * power
            if whole and step != int(step):
                continue
            # Rounded before floor and ceil: 0.3 / 0.1 is 2.9999999999999996.
            if within:
                first, last = math.ceil(round(low / step, 9)), math.floor(round(high / step, 9))
            else:
                first, last = math.floor(round(low / step, 9)), math.ceil(round(high / step, 9))
                last = max(last, first + 1)
            if last - first + 1 <= most:
                digits = 12 - math.floor(math.log10(step))  # 0.30000000000000004 reads 0.3
                return [
                    int(n * step) if whole else round(n * step, digits)
                    for n in range(first, last + 1)
                ]
        power *= 10


def tick_label(value: float) -> str:
    """A tick value without trailing zeros (``2``, ``0.5``, ``1.25``)."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text
