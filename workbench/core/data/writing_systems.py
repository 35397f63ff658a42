"""What a sentence is written in, as the cleaning rules measure it.

A Chinese reference that is mostly Latin letters is a mis-aligned or untranslated line;
an English source that is mostly Han characters is one too. Which script a letter belongs
to is read from its Unicode name (``CJK UNIFIED IDEOGRAPH-4E2D``, ``LATIN SMALL LETTER
A``), which covers every block of a script, full-width forms included, without a table of
code-point ranges to keep up to date. Only letters count: digits, punctuation and spaces
say nothing about the language.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from workbench.core.languages import script_of

_HAN = ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH")
#: ISO 15924 script code -> the words in the Unicode names of its letters.
SCRIPT_NAMES: dict[str, tuple[str, ...]] = {
    "Hans": _HAN,
    "Hant": _HAN,
    "Jpan": (*_HAN, "HIRAGANA", "KATAKANA"),
    "Hang": ("HANGUL", *_HAN),
    "Latn": ("LATIN",),
    "Cyrl": ("CYRILLIC",),
    "Arab": ("ARABIC",),
    "Grek": ("GREEK",),
    "Hebr": ("HEBREW",),
    "Deva": ("DEVANAGARI",),
    "Beng": ("BENGALI",),
    "Taml": ("TAMIL",),
    "Thai": ("THAI",),
}


class _Verdicts(dict[int, str]):
    """A ``str.translate`` table for one script: a letter of it becomes ``y``, another
    letter ``n``, anything else nothing; filled in per character as text meets it."""

    def __init__(self, script: str) -> None:
        super().__init__()
        self.words = SCRIPT_NAMES[script]

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if not unicodedata.category(char).startswith("L"):
            verdict = ""
        else:
            name = unicodedata.name(char, "")
            verdict = "y" if any(word in name for word in self.words) else "n"
        self[code] = verdict
        return verdict


@cache
def _verdicts(script: str) -> _Verdicts:
    return _Verdicts(script)


def script_share(text: str, lang: str | None) -> float | None:
    """The share of ``text``'s letters written in ``lang``'s script, or None when the
    language's script is not known here or the text has no letters (``2019``, ``!``)."""
    script = script_of(lang)
    if script not in SCRIPT_NAMES:
        return None
    verdicts = text.translate(_verdicts(script))
    if not verdicts:
        return None
    return verdicts.count("y") / len(verdicts)
