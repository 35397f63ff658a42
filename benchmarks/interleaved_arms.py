"""Arms timed call by call, in a new random order each round, so that load from other jobs
on the machine falls on all arms alike; then each arm's median and quartiles, and its
median over a reference arm's. A figure too few calls were timed for is ``None`` (printed
"n/a")."""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from figures import ratio


def interleaved(
    calls: dict[str, Any], runs: int, warmup: int = 5, gap: float = 0.0
) -> dict[str, list[float]]:
    """Seconds per call for each arm, arms shuffled within each round."""
    for call in calls.values():
        for _ in range(warmup):
            call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    order = list(calls)
    rng = random.Random(0)
    for _ in range(runs):
        rng.shuffle(order)
        for name in order:
            time.sleep(gap)
            started = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - started)
    return times


def milliseconds(seconds: float | None) -> float | None:
    """Seconds as milliseconds to 0.1 ms; ``None`` stays ``None``."""
    return None if seconds is None else round(seconds * 1000, 1)


def summarize(times: dict[str, list[float]], reference: str) -> list[dict[str, Any]]:
    """Median and quartiles of each arm, and its median over the ``reference`` arm's;
    ``None`` (printed "n/a") where too few calls were timed for the figure."""
    base = statistics.median(times[reference]) if times[reference] else None
    rows = []
    for name, values in times.items():
        median = statistics.median(values) if values else None
        quartiles = statistics.quantiles(values, n=4) if len(values) >= 2 else [None] * 3
        times_base = ratio(median, base)
        rows.append(
            {
                "arm": name,
                "median_ms": milliseconds(median),
                "q1_ms": milliseconds(quartiles[0]),
                "q3_ms": milliseconds(quartiles[2]),
                "ratio": None if times_base is None else round(times_base, 3),
                "runs": len(values),
            }
        )
    return rows
