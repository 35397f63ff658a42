"""Figures in the benchmarks' reports: one that was not measured prints as "n/a".

A benchmark can measure for ten minutes before it writes its report. A figure that went
missing on the way (a probe that no longer finds what the screen shows, a phase that did
not report a key, a ratio over zero) must cost its own cell of the report, not the whole
run: every report formats its numbers through :func:`figure`, and takes medians and
ratios through :func:`median` and :func:`ratio`, which give ``None`` for "not measured".

The ``--smoke`` runs (the smallest mode of each benchmark, run by the tests so that a
broken benchmark shows in CI) write their reports through :func:`report_path`: into a
temporary folder, never over the figures committed in benchmarks/.
"""

from __future__ import annotations

import math
import statistics
import tempfile
from collections.abc import Iterable
from pathlib import Path

NA = "n/a"
BENCHMARKS = Path(__file__).resolve().parent


def figure(value: float | None, spec: str = "", unit: str = "") -> str:
    """``value`` formatted by ``spec``, then ``unit``; "n/a" when it was not measured."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NA
    return f"{value:{spec}}{unit}"


def median(values: Iterable[float | None]) -> float | None:
    """The median of the values that were measured; ``None`` when none were."""
    found = [v for v in values if v is not None]
    return statistics.median(found) if found else None


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``; ``None`` when either is missing or the denominator is 0."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def report_path(out: str | Path | None, committed: Path, smoke: bool) -> Path:
    """Where a report goes: ``out`` when given, else the committed file.

    A smoke run's figures are not worth keeping, so it writes into a fresh temporary
    folder by default and refuses an ``out`` in benchmarks/, where the committed
    figures are.
    """
    if not smoke:
        return Path(out) if out else committed
    if out is None:
        return Path(tempfile.mkdtemp(prefix="benchmark-smoke-")) / committed.name
    path = Path(out)
    if BENCHMARKS in path.resolve().parents:
        raise SystemExit(
            f"--smoke would write over the committed figures in {path}; "
            "give --out a path outside benchmarks/ (or leave it out: a temporary folder)"
        )
    return path
