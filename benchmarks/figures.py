"""Figures in the benchmarks' reports: one that was not measured prints as "n/a".

A benchmark can measure for ten minutes before it writes its report. A figure that went
missing on the way (a probe that no longer finds what the screen shows, a phase that did
not report a key, a ratio over zero) must cost its own cell of the report, not the whole
run: every report formats its numbers through :func:`figure`, and takes medians and
ratios through :func:`median` and :func:`ratio`, which give ``None`` for "not measured".

The ``--smoke`` runs (the smallest mode of each benchmark, run by the tests so that a
broken benchmark shows in CI) write their reports through :func:`report_path`: into a
temporary folder, never over the figures committed in benchmarks/.

A figure measured more than once gives its repetitions' spread (:func:`spread`,
:func:`spread_text`): the largest repetition over the smallest, less one. Where one arm's
repetitions of a figure differ by more than :data:`NOISY` (25%), the figure says so on its
own line (:func:`noise_warning`) and in the report's summary (:func:`noise_summary`), and
is not quoted as a result: the machine was too busy (another session measuring) for it.
Each report also gives the load average (:func:`load_average`) before and after its run.
"""

from __future__ import annotations

import math
import os
import statistics
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

NA = "n/a"
BENCHMARKS = Path(__file__).resolve().parent
#: Repetitions of a figure that differ by more than this (largest / smallest − 1) are noise.
NOISY = 0.25


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


@dataclass(frozen=True)
class Spread:
    """How far apart one figure's repetitions are: the smallest, the largest, and the
    relative spread ``largest / smallest − 1`` (``None`` with fewer than 2 measured, or a
    smallest of 0 or less)."""

    count: int  # the repetitions that measured the figure
    low: float | None
    high: float | None
    relative: float | None

    @property
    def noisy(self) -> bool:
        """Whether the repetitions differ by more than :data:`NOISY`."""
        return self.relative is not None and self.relative > NOISY


def spread(values: Iterable[float | None]) -> Spread:
    """The spread of the values that were measured (``None``: a repetition that was not)."""
    found = [v for v in values if v is not None and not math.isnan(v)]
    if not found:
        return Spread(0, None, None, None)
    low, high = min(found), max(found)
    relative = None if len(found) < 2 else ratio(high - low, low if low > 0 else None)
    return Spread(len(found), low, high, relative)


def spread_share(found: Spread) -> str:
    """The relative spread alone: ``"2%"``; ``"1 repetition: no spread"``; "n/a"."""
    if found.count == 1:
        return "1 repetition: no spread"
    return figure(found.relative, ".0%") if found.count else NA


def spread_text(found: Spread, spec: str = "", unit: str = "") -> str:
    """``"0.667–0.678 (2%)"``; ``"1 repetition: no spread"``; "n/a" when none measured."""
    if found.count < 2:
        return spread_share(found)
    low, high = figure(found.low, spec), figure(found.high, spec, unit)
    return f"{low}–{high} ({spread_share(found)})"


def noisy_arms(spreads: Mapping[str, Spread]) -> list[tuple[str, str]]:
    """Each arm (a key; "" for a figure of one arm) whose repetitions differ by more than
    NOISY, with by how much: ``[("workbench", "31%")]``; ``[]`` when none does."""
    return [
        (name, f"{s.relative:.0%}")
        for name, s in spreads.items()
        if s.noisy and s.relative is not None
    ]


def noise_warning(spreads: Mapping[str, Spread]) -> str:
    """The flag on a noisy figure's line: "noisy: workbench repetitions differ by 31%
    (> 25%); not a result"; "" when no arm's repetitions differ by more than NOISY."""
    loud = noisy_arms(spreads)
    if not loud:
        return ""
    (name, by), rest = loud[0], loud[1:]
    differ = ", ".join(
        [f"{name} repetitions differ by {by}".strip(), *(f"{n} by {b}" for n, b in rest)]
    )
    return f"noisy: {differ} (> {NOISY:.0%}); not a result"


def noise_summary(figures: Mapping[str, Mapping[str, Spread]]) -> str:
    """The summary's line on noise, over every figure of a report (its name → each arm's
    spread): which figures are noisy, or that none is, or that none had 2 repetitions."""
    if not any(s.count >= 2 for arms in figures.values() for s in arms.values()):
        return "Noise: 1 repetition per arm: no spread, so no figure here can be told from noise."
    loud = [
        f"{name} ({', '.join(f'{arm} {by}'.strip() for arm, by in arms)})"
        for name, s in figures.items()
        if (arms := noisy_arms(s))
    ]
    if not loud:
        return f"Noise: no figure's repetitions differ by more than {NOISY:.0%}."
    return (
        f"**Noisy, not results (repetitions differ by more than {NOISY:.0%}): "
        f"{'; '.join(loud)}.** Rerun them on a quieter machine."
    )


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages: how busy the shared machine was."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else NA
