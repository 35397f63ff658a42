"""One sentence pair: the unit every source, step and front end passes around."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Pair:
    """One source sentence, its reference translation, and optional metadata."""

    source: str
    target: str
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
