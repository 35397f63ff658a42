"""The sizes and durations ``workbench cache prune`` reads, and the ages it prints.

Sizes are decimal, as ``du --si`` and disk makers count (``10GB`` is 10,000,000,000
bytes); the binary units (``GiB``) are read too, as what they say. A value that is not
one (``-1``, ``abc``, ``nan``) is refused in one sentence that names the flag, the value
and what to write instead.
"""

from __future__ import annotations

import math
import re

from workbench.errors import WorkbenchError

#: Bytes a size unit stands for (lower case; no unit: for 0 alone, see parse_size).
SIZE_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
    "t": 10**12, "tb": 10**12, "p": 10**15, "pb": 10**15,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "pib": 2**50,
}  # fmt: skip
#: Seconds a duration unit stands for (lower case).
DURATION_UNITS = {
    "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600,
    "d": 86_400, "day": 86_400, "days": 86_400, "w": 604_800, "week": 604_800, "weeks": 604_800,
}  # fmt: skip
#: A number and a unit: ``10GB``, ``1.5 TB``, ``30d``.
_AMOUNT = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*", re.IGNORECASE)

SIZE_FIX = "give one such as 500MB, 10GB or 1.5TB (decimal units, as du --si: 1GB = 10^9 bytes)"
DURATION_FIX = "give one such as 12h, 30d or 2w (units s, m, h, d, w)"


def parse_size(text: str, flag: str = "--max-size") -> int:
    """The bytes ``text`` says (``500MB``, ``10GB``, ``1.5TB``, ``0``), or a
    :class:`WorkbenchError` naming ``flag``."""
    value = _amount(text, SIZE_UNITS)
    if value is None:
        raise WorkbenchError(f"{flag} {text}: not a size; {SIZE_FIX}")
    if value and _unit(text) == "":  # 10 could mean bytes, MB or GB: say which
        raise WorkbenchError(f"{flag} {text}: a size needs its unit; {SIZE_FIX}")
    return round(value)


def parse_duration(text: str, flag: str = "--older-than") -> float:
    """The seconds ``text`` says (``12h``, ``30d``, ``2w``), or a :class:`WorkbenchError`
    naming ``flag``."""
    value = _amount(text, DURATION_UNITS)
    if value is None:
        raise WorkbenchError(f"{flag} {text}: not a duration; {DURATION_FIX}")
    if _unit(text) == "M":  # minutes here, months in systemd's notation: say which
        raise WorkbenchError(
            f"{flag} {text}: M could mean minutes or months; write min for minutes, or "
            "the months in days (6 months: 180d)"
        )
    return value


def _unit(text: str) -> str:
    """The unit of an amount as written (case kept)."""
    found = _AMOUNT.fullmatch(text)
    return found.group(2) if found else ""


def _amount(text: str, units: dict[str, int]) -> float | None:
    """A number times its unit, or None when ``text`` is no such thing (a sign included:
    no size or duration is negative)."""
    found = _AMOUNT.fullmatch(text)
    if found is None or found.group(2).lower() not in units:
        return None
    value = float(found.group(1)) * units[found.group(2).lower()]
    return value if math.isfinite(value) else None


def span(seconds: float) -> str:
    """A duration as a user reads it: ``40 s``, ``12 min``, ``5 h``, ``3 days``."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min"
    if seconds < 2 * 86_400:
        return f"{seconds // 3600:.0f} h"
    return f"{seconds // 86_400:,.0f} days"


def ago(seconds: float) -> str:
    """How long ago: ``just now`` under a minute, else :func:`span` and ``ago``."""
    return "just now" if seconds < 60 else f"{span(seconds)} ago"
