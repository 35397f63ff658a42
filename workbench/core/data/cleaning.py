"""Cleaning the pairs before the split: rules a user can read, switch and count.

Noise costs NMT up to ~10 BLEU and copied targets teach a model to copy (Khayrallah &
Koehn 2018); the MT toolkits filter before training (Moses ``clean-corpus-n``, OpenNMT's
``filtertoolong``). Each rule here has a name, a reason a user can read, and a count that
the run prints, records and shows. A pair is dropped by the first rule it fails, so the
counts add up to what was dropped. The rules, in order:

- ``empty``: a side is empty;
- ``placeholder``: a side is the literal word ``placeholder`` (the HSK corpus has 65);
- ``copy``: the target is the source (after normalising case, spaces and punctuation);
- ``script``: a side's letters are less than ``clean_min_script_share`` in its language's
  script (a Chinese reference in Latin letters, an English source in Han characters);
- ``ratio``: one side is more than ``clean_max_length_ratio`` times the other's length, in
  words (characters for Chinese, Japanese and Thai), as Moses' ``clean-corpus-n`` bounds it;
- ``long``: longer than ``max_source_length``/``max_target_length`` tokens of the model's
  tokenizer. Counted and kept (training truncates them) unless ``drop_long``;
- ``duplicate``: the same pair again (first kept);
- ``repeated source``: a source seen before, normalised, with another target: one source
  must not sit in both train and validation;
- ``in test set``: a pair whose source or target, normalised, is a test pair's. This one
  guards the number a user hands in, so ``--no-clean`` leaves it on; only naming it in
  ``clean_skip`` turns it off.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from workbench.core.config.run_config import RunConfig
from workbench.core.data.writing_systems import script_share
from workbench.core.languages import length_unit, length_units
from workbench.core.records.run_records import CleaningRecord
from workbench.core.records.typed import record_of

#: The rule that keeps the test score honest: on even with cleaning off.
TEST_RULE = "in test set"
#: What each rule drops, as the report and the Dataset pane explain it.
RULE_REASONS = {
    "empty": "a side is empty",
    "placeholder": "a side is the word 'placeholder'",
    "copy": "the target is a copy of the source",
    "script": "a side is not mostly in its language's script",
    "ratio": "one side is far longer than the other",
    "long": "longer than the maximum length in tokens",
    "duplicate": "the same pair again",
    "repeated source": "a source already seen with another target",
    TEST_RULE: "its source or target is in the test set",
}

#: Token lengths of sources and targets as the model's tokenizer counts them.
TokenCounter = Callable[[list[str], list[str]], tuple[list[int], list[int]]]


class _PairLike(Protocol):
    @property
    def source(self) -> str: ...
    @property
    def target(self) -> str: ...


P = TypeVar("P", bound=_PairLike)


class _Dropping(dict[int, str | None]):
    """A ``str.translate`` table that deletes punctuation, symbols and spaces, filled in
    per character as text meets it (a character's verdict is looked up once)."""

    def __missing__(self, code: int) -> str | None:
        ch = chr(code)
        keep = unicodedata.category(ch)[0] not in "PSZ" and ch.strip()
        self[code] = None if not keep else ch
        return self[code]


_DROPPING = _Dropping()


def normalised(text: str) -> str:
    """``text`` with case, spaces and punctuation taken out: the key two sentences are the
    same sentence by (``Hello, world!`` and ``hello world`` are one)."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_DROPPING)


@dataclass(frozen=True)
class CleaningSettings:
    """The rules a run applies and their thresholds, from its configuration."""

    rules: tuple[str, ...]
    source_lang: str
    target_lang: str
    min_script_share: float = 0.5
    max_length_ratio: float = 9.0
    max_source_length: int = 128
    max_target_length: int = 128
    drop_long: bool = False

    @classmethod
    def of(cls, config: RunConfig) -> CleaningSettings:
        """The settings of a run's configuration."""
        rules = config.cleaning_rules()
        if not config.clean and TEST_RULE not in config.skipped_rules():
            rules = (TEST_RULE,)
        return cls(
            rules=rules,
            source_lang=config.data_source_lang,
            target_lang=config.data_target_lang,
            min_script_share=config.clean_min_script_share,
            max_length_ratio=config.clean_max_length_ratio,
            max_source_length=config.max_source_length,
            max_target_length=config.max_target_length,
            drop_long=config.drop_long,
        )


@dataclass(frozen=True)
class Dropped:
    """A pair a rule took out (or, for ``long`` without ``drop_long``, only counted)."""

    rule: str
    source: str
    target: str
    kept: bool = False

    def to_dict(self) -> dict[str, Any]:
        """One line of the run's ``dropped_pairs.jsonl``."""
        return {"rule": self.rule, "source": self.source, "target": self.target, "kept": self.kept}


@dataclass
class CleaningReport:
    """What cleaning did: each applied rule's count, the pairs it took, the settings."""

    settings: CleaningSettings
    pairs_in: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    dropped: list[Dropped] = field(default_factory=list)
    #: False when no tokenizer was at hand (a model built from the data has none yet).
    long_measured: bool = False

    @property
    def total(self) -> int:
        """Pairs taken out (long pairs that were kept do not count)."""
        return sum(1 for d in self.dropped if not d.kept)

    def lines(self) -> list[str]:
        """The run's cleaning lines: the total, then every applied rule's count, zeros too."""
        s = self.settings
        if not s.rules:
            return ["cleaning: off (--no-clean, clean_skip 'in test set'): every pair kept"]
        parts = []
        for rule in s.rules:
            if rule == "long" and not self.long_measured:
                parts.append("long not counted (the model is built from the data)")
                continue
            count = f"{rule} {self.counts.get(rule, 0):,}"
            if rule == "long" and not s.drop_long:
                count += " (kept, truncated; --drop-long drops them)"
            parts.append(count)
        if s.rules == (TEST_RULE,):
            head = "cleaning: off (--no-clean), but pairs in the test set leave training:"
        else:
            head = (
                f"cleaning: {self.total:,} of {self.pairs_in:,} pairs dropped before the "
                "split (dropped_pairs.jsonl lists them):"
            )
        return [head, "  " + " · ".join(parts)]

    def record(self) -> CleaningRecord:
        """The record in config.json and summary.json."""
        return record_of(CleaningRecord, self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """The record's JSON, as config.json holds it."""
        s = self.settings
        return {
            "rules": list(s.rules),
            "counts": {rule: self.counts.get(rule, 0) for rule in s.rules},
            "pairs_in": self.pairs_in,
            "dropped": self.total,
            "long_measured": self.long_measured,
            "drop_long": s.drop_long,
            "min_script_share": s.min_script_share,
            "max_length_ratio": s.max_length_ratio,
        }


#: The rules judged on one pair alone, in order; a pair's code is 1 + the index of the
#: first it fails (0: it passes them all), so a corpus's verdicts fit in one int8 column.
PAIR_RULES = ("empty", "placeholder", "copy", "script", "ratio")
#: The key of a sentence that normalises to nothing (``!!!``): never a repeat or a match.
NO_KEY = 0


def key_of(normalised_text: str) -> int:
    """A 64-bit key for a normalised sentence (:data:`NO_KEY` for an empty one).

    Repeats and test-set matches are found by these keys, so a corpus's sets hold 8-byte
    numbers, not its sentences. blake2b, not ``hash()``: the keys must agree across the
    worker processes that compute them. Two different sentences share a key with odds of
    about n²/2⁶⁵ (2·10⁻⁵ for WMT19's 26M pairs).
    """
    if not normalised_text:
        return NO_KEY
    digest = hashlib.blake2b(normalised_text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True) or 1


def _first_failed(
    source: str, target: str, s: CleaningSettings, source_key: str, target_key: str
) -> str | None:
    """The first of the per-pair rules the pair fails, or None (the keys: normalised)."""
    rules = s.rules
    if "empty" in rules and (not source.strip() or not target.strip()):
        return "empty"
    if "placeholder" in rules and "placeholder" in (source.lower(), target.lower()):
        return "placeholder"
    if "copy" in rules and source and source_key == target_key:
        return "copy"
    if "script" in rules:
        for text, lang in ((source, s.source_lang), (target, s.target_lang)):
            share = script_share(text, lang)
            if share is not None and share < s.min_script_share:
                return "script"
    if "ratio" in rules:
        a = len(length_units(source, length_unit(s.source_lang)))
        b = len(length_units(target, length_unit(s.target_lang)))
        if a and b and max(a, b) > s.max_length_ratio * min(a, b):
            return "ratio"
    return None


def cleaning_columns(
    sources: list[str], targets: list[str], settings: CleaningSettings
) -> dict[str, list[int]]:
    """What cleaning needs to know of each pair, pair by pair (so any number of processes
    may compute it on their share): the per-pair rule it fails (``rule``, a code of
    :data:`PAIR_RULES`), the keys of its normalised source and target, and of the exact
    pair (``duplicate`` compares pairs as they are)."""
    rule, source_keys, target_keys, pair_keys = [], [], [], []
    for source, target in zip(sources, targets, strict=True):
        norm_source, norm_target = normalised(source), normalised(target)
        failed = _first_failed(source, target, settings, norm_source, norm_target)
        rule.append(0 if failed is None else PAIR_RULES.index(failed) + 1)
        source_keys.append(key_of(norm_source))
        target_keys.append(key_of(norm_target))
        pair_keys.append(key_of(f"{source}\x00{target}"))
    return {
        "rule": rule,
        "source_key": source_keys,
        "target_key": target_keys,
        "pair_key": pair_keys,
    }
