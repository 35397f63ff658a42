"""Numbers as text, the one way: fixed decimals, thousands separators, intervals, and a
dash where a value is missing (never a number such as 0.00)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: How every front end shows a value a run summary lacks: never as a number such as 0.00.
MISSING = "—"
#: How compared runs and scored files are named, in the order given (A is the baseline).
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def number(value: Any, digits: int = 2, *, spec: str | None = None, missing: str = MISSING) -> str:
    """A float with ``digits`` decimals (or formatted by ``spec``, e.g. ``.2e``), an int
    with thousands separators, other text as is, and ``missing`` for None (or a bool,
    which is no count)."""
    if isinstance(value, bool) or value is None:
        return missing
    if spec is not None:
        return format(value, spec)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def signed(value: Any, digits: int = 2) -> str:
    """``+1.25`` / ``-0.50``: a change with its sign, or :data:`MISSING` when ``value`` is
    not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return f"{value:+.{digits}f}"


def interval(ci: Sequence[Any] | None, signed: bool = False) -> str:
    """``8.66…11.80``, or ``+0.34…+1.33`` ``signed`` (the interval of a change): a 95%
    interval, the one way every front end and document writes one. An end that is not a
    number (a hand-edited file) is :data:`MISSING`."""
    ends = [*(ci or ()), None, None][:2]
    return "…".join(
        f"{end:{'+' if signed else ''}.2f}"
        if isinstance(end, int | float) and not isinstance(end, bool)
        else MISSING
        for end in ends
    )


def percent(value: Any) -> str:
    """``42%``, or :data:`MISSING` when ``value`` is not a number."""
    return f"{value:.0%}" if isinstance(value, int | float) else MISSING


def format_seconds(seconds: float | None) -> str:
    """``1h02m03s`` / ``4m05s`` / ``7s``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def format_bytes(count: int) -> str:
    """``512 B`` / ``12.3 KiB`` / ``1,073.2 MiB`` / ``1.05 GiB``."""
    if count < 1024:
        return f"{count} B"
    if count < 1024**2:
        return f"{count / 1024:.1f} KiB"
    if count < 10 * 1024**3:
        return f"{count / 1024**2:,.1f} MiB"
    return f"{count / 1024**3:,.2f} GiB"


def format_si_bytes(count: int) -> str:
    """``512 B`` / ``12.3 kB`` / ``403.2 MB`` / ``1.5 GB`` / ``2.25 TB``: decimal units,
    as ``du --si`` prints them and as ``workbench cache prune --max-size`` reads them, so
    that a size shown is a size a user can type back."""
    if count < 1000:
        return f"{count} B"
    for unit, scale in (("kB", 10**3), ("MB", 10**6), ("GB", 10**9)):
        if count < 1000 * scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count / 10**12:,.2f} TB"
