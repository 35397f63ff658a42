"""Wide (CJK) characters: two terminal cells, one em in a figure, their own word units.

One test for the terminal heatmap's cell widths, the SVG text widths, the attention
labels and the Lab's repetition count, so they all agree on what is wide.
"""

from __future__ import annotations

import unicodedata


def is_wide(ch: str) -> bool:
    """True for a wide or full-width character (Chinese, Japanese, Korean, full-width)."""
    return unicodedata.east_asian_width(ch) in ("W", "F")


def has_cjk(text: str) -> bool:
    """True when the text has wide (CJK) characters, which need their own units and fonts."""
    return any(is_wide(ch) for ch in text)
