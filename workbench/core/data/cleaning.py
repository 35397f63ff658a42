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

import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from workbench.core.config import RunConfig
from workbench.core.data.scripts import length_units, script_share

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


def normalised(text: str) -> str:
    """``text`` with case, spaces and punctuation taken out: the key two sentences are the
    same sentence by (``Hello, world!`` and ``hello world`` are one)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if unicodedata.category(ch)[0] not in "PSZ" and ch.strip())


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

    def take(self, rule: str, pair: _PairLike, kept: bool = False) -> None:
        """Count ``pair`` under ``rule``."""
        self.counts[rule] = self.counts.get(rule, 0) + 1
        self.dropped.append(Dropped(rule, pair.source, pair.target, kept))

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

    def to_dict(self) -> dict[str, Any]:
        """The record in config.json and summary.json."""
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


def _first_failed(pair: _PairLike, s: CleaningSettings) -> str | None:
    """The first of the per-pair rules ``pair`` fails, or None."""
    src, tgt = pair.source, pair.target
    rules = s.rules
    if "empty" in rules and (not src.strip() or not tgt.strip()):
        return "empty"
    if "placeholder" in rules and "placeholder" in (src.lower(), tgt.lower()):
        return "placeholder"
    if "copy" in rules and src and normalised(src) == normalised(tgt):
        return "copy"
    if "script" in rules:
        for text, lang in ((src, s.source_lang), (tgt, s.target_lang)):
            share = script_share(text, lang)
            if share is not None and share < s.min_script_share:
                return "script"
    if "ratio" in rules:
        a, b = length_units(src, s.source_lang), length_units(tgt, s.target_lang)
        if a and b and max(a, b) > s.max_length_ratio * min(a, b):
            return "ratio"
    return None


def clean_pairs(
    pairs: list[P],
    settings: CleaningSettings,
    count_tokens: TokenCounter | None = None,
    test: Iterable[_PairLike] = (),
) -> tuple[list[P], CleaningReport]:
    """The pairs that pass every rule of ``settings``, in their order, and the report.

    ``count_tokens`` measures the ``long`` rule; ``test`` is the test set when it is known
    before the split (a Hub split, a ``--test-data`` file); a test share held out of the
    same data is checked after the split with :func:`drop_test_overlap`.
    """
    report = CleaningReport(settings, pairs_in=len(pairs))
    kept: list[P] = []
    for pair in pairs:
        rule = _first_failed(pair, settings)
        if rule is None:
            kept.append(pair)
        else:
            report.take(rule, pair)
    if "long" in settings.rules and count_tokens is not None:
        kept = _long_rule(kept, settings, count_tokens, report)
    seen_pairs: set[tuple[str, str]] = set()
    seen_sources: set[str] = set()
    unique: list[P] = []
    for pair in kept:
        key = normalised(pair.source)
        if "duplicate" in settings.rules and (pair.source, pair.target) in seen_pairs:
            report.take("duplicate", pair)
        elif "repeated source" in settings.rules and key and key in seen_sources:
            report.take("repeated source", pair)
        else:
            seen_pairs.add((pair.source, pair.target))
            seen_sources.add(key)
            unique.append(pair)
    return drop_test_overlap(unique, test, report), report


def _long_rule(
    pairs: list[P], s: CleaningSettings, count_tokens: TokenCounter, report: CleaningReport
) -> list[P]:
    """Count (and with ``drop_long`` drop) pairs past the maximum lengths."""
    report.long_measured = True
    source_lengths, target_lengths = count_tokens(
        [p.source for p in pairs], [p.target for p in pairs]
    )
    kept: list[P] = []
    for pair, n_source, n_target in zip(pairs, source_lengths, target_lengths, strict=True):
        if n_source > s.max_source_length or n_target > s.max_target_length:
            report.take("long", pair, kept=not s.drop_long)
            if s.drop_long:
                continue
        kept.append(pair)
    return kept


def drop_test_overlap(pairs: list[P], test: Iterable[_PairLike], report: CleaningReport) -> list[P]:
    """``pairs`` without those whose normalised source or target is a test pair's."""
    if TEST_RULE not in report.settings.rules:
        return pairs
    sources, targets = set(), set()
    for pair in test:
        sources.add(normalised(pair.source))
        targets.add(normalised(pair.target))
    sources.discard("")
    targets.discard("")
    if not sources and not targets:
        return pairs
    kept: list[P] = []
    for pair in pairs:
        if normalised(pair.source) in sources or normalised(pair.target) in targets:
            report.take(TEST_RULE, pair)
        else:
            kept.append(pair)
    return kept
