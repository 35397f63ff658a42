"""Wide (CJK) characters: two terminal cells, one em in a figure, their own word units.

One test for the terminal heatmap's cell widths, the SVG text widths, the attention
labels, the Lab's repetition count and how a translator joins the translations of a long
line's pieces, so they all agree on what is wide.
"""

from __future__ import annotations

import unicodedata


def is_wide(ch: str) -> bool:
    """True for a wide or full-width character (Chinese, Japanese, Korean, full-width)."""
    return unicodedata.east_asian_width(ch) in ("W", "F")


def is_han(ch: str) -> bool:
    """True for a Chinese character of the main block (U+4E00-U+9FFF), which Japanese
    writes too; not the wide Hangul, kana or full-width punctuation."""
    return "\u4e00" <= ch <= "\u9fff"


def has_cjk(text: str, more_than: float = 0.0, han_only: bool = False) -> bool:
    """True when more than ``more_than`` of the text's characters are wide (CJK), which
    need their own units and fonts: any one of them by default. With ``han_only`` only
    Chinese characters count (:func:`is_han`), so that Korean text is not Chinese."""
    test = is_han if han_only else is_wide
    wide = sum(1 for ch in text if test(ch))
    return bool(text) and wide / len(text) > more_than
