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
        a, b = length_units(source, s.source_lang), length_units(target, s.target_lang)
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


#: Token lengths (source, target) of the given rows, for the ``long`` rule.
RowLengths = Callable[[Any], tuple[Any, Any]]


@dataclass
class CleaningPass:
    """The rules over a whole corpus, from its :func:`cleaning_columns`: the part whose
    verdicts depend on order (the first of a repeated pair is the one kept), over arrays
    of keys, never sentences.

    The rules read as a loop over the pairs in order (keep a pair unless its exact pair,
    or its normalised source, was kept before); here they run as array operations with
    the same verdicts: the first pair with a given normalised source is always kept (no
    kept pair can equal it: an equal pair has the same source), so a later pair with that
    source is a ``duplicate`` when it equals that first pair and a ``repeated source``
    otherwise; a pair whose source normalises to nothing is kept unless it equals an
    earlier such pair. ``tests/test_data_scale.py`` checks this against the loop.

    Rows are numbered as in the corpus read; :attr:`drops` lists what each rule took, in
    the order the loop would meet them, for the caller to fill in texts.
    """

    report: CleaningReport
    drops: list[tuple[str, int, bool]] = field(default_factory=list)

    def _take(self, rule: str, rows: Any, kept: bool = False) -> None:
        if not len(rows):
            return
        counts = self.report.counts
        counts[rule] = counts.get(rule, 0) + len(rows)
        self.drops.extend((rule, int(row), kept) for row in rows)

    def run(
        self,
        columns: dict[str, Any],
        lengths: RowLengths | None = None,
        test_keys: tuple[set[int], set[int]] = (set(), set()),
    ) -> list[int]:
        """The rows that pass, in order."""
        import numpy as np

        s = self.report.settings
        codes = np.asarray(columns["rule"], dtype=np.int8)
        for row in np.flatnonzero(codes):
            self._take(PAIR_RULES[codes[row] - 1], [row])
        kept = np.flatnonzero(codes == 0)
        if "long" in s.rules and lengths is not None:
            kept = self._long(kept, lengths)
        source_keys = np.asarray(columns["source_key"], dtype=np.int64)[kept]
        pair_keys = np.asarray(columns["pair_key"], dtype=np.int64)[kept]
        duplicate = np.zeros(len(kept), dtype=bool)
        repeated = np.zeros(len(kept), dtype=bool)
        if "repeated source" in s.rules:
            named = source_keys != NO_KEY
            _, first, inverse = np.unique(source_keys, return_index=True, return_inverse=True)
            later = named & (np.arange(len(kept)) != first[inverse])
            if "duplicate" in s.rules:
                same = pair_keys == pair_keys[first[inverse]]
                duplicate, repeated = later & same, later & ~same
                unnamed = np.flatnonzero(~named)
                duplicate[unnamed] = _repeats(pair_keys[unnamed])
            else:
                repeated = later
        elif "duplicate" in s.rules:
            duplicate = _repeats(pair_keys)
        for position in np.flatnonzero(duplicate | repeated):
            rule = "duplicate" if duplicate[position] else "repeated source"
            self._take(rule, [kept[position]])
        unique = kept[~(duplicate | repeated)]
        return self.overlap(unique.tolist(), columns, test_keys)

    def _long(self, rows: Any, lengths: RowLengths) -> Any:
        import numpy as np

        s = self.report.settings
        self.report.long_measured = True
        source_lengths, target_lengths = (np.asarray(n, dtype=np.int64) for n in lengths(rows))
        over = (source_lengths > s.max_source_length) | (target_lengths > s.max_target_length)
        self._take("long", rows[over], kept=not s.drop_long)
        return rows[~over] if s.drop_long else rows

    def overlap(
        self, rows: list[int], columns: dict[str, Any], test_keys: tuple[set[int], set[int]]
    ) -> list[int]:
        """``rows`` without those whose normalised source or target is a test pair's."""
        import numpy as np

        sources, targets = test_keys
        if TEST_RULE not in self.report.settings.rules or not (sources or targets):
            return rows
        at = np.asarray(rows, dtype=np.int64)
        source_keys = np.asarray(columns["source_key"], dtype=np.int64)[at]
        target_keys = np.asarray(columns["target_key"], dtype=np.int64)[at]
        hit = np.isin(source_keys, np.fromiter(sources, np.int64, len(sources))) | np.isin(
            target_keys, np.fromiter(targets, np.int64, len(targets))
        )
        self._take(TEST_RULE, at[hit])
        return at[~hit].tolist()


def _repeats(keys: Any) -> Any:
    """True for each key that occurs earlier in ``keys``."""
    import numpy as np

    repeat = np.ones(len(keys), dtype=bool)
    repeat[np.unique(keys, return_index=True)[1]] = False
    return repeat


def test_keys_of(pairs: Iterable[_PairLike]) -> tuple[set[int], set[int]]:
    """The keys of a test set's normalised sources and targets (empty ones left out)."""
    sources = {key_of(normalised(p.source)) for p in pairs}
    targets = {key_of(normalised(p.target)) for p in pairs}
    return sources - {NO_KEY}, targets - {NO_KEY}


def _drops_in_memory(report: CleaningReport, cleaning: CleaningPass, pairs: list[P]) -> None:
    for rule, row, kept in cleaning.drops:
        report.dropped.append(Dropped(rule, pairs[row].source, pairs[row].target, kept))


def clean_pairs(
    pairs: list[P],
    settings: CleaningSettings,
    count_tokens: TokenCounter | None = None,
    test: Iterable[_PairLike] = (),
) -> tuple[list[P], CleaningReport]:
    """The pairs that pass every rule of ``settings``, in their order, and the report.

    ``count_tokens`` measures the ``long`` rule; ``test`` is the test set when it is known
    before the split (a Hub split, a ``--test-data`` file); a test share held out of the
    same data is checked after the split with :func:`drop_test_overlap`. For pairs in
    memory; a corpus on disk goes through the same :class:`CleaningPass` in
    :mod:`.prepared`.
    """
    report = CleaningReport(settings, pairs_in=len(pairs))
    columns = cleaning_columns([p.source for p in pairs], [p.target for p in pairs], settings)

    def lengths(rows: list[int]) -> tuple[list[int], list[int]]:
        assert count_tokens is not None
        return count_tokens([pairs[r].source for r in rows], [pairs[r].target for r in rows])

    cleaning = CleaningPass(report)
    kept = cleaning.run(columns, lengths if count_tokens else None, test_keys_of(test))
    _drops_in_memory(report, cleaning, pairs)
    return [pairs[r] for r in kept], report


def drop_test_overlap(pairs: list[P], test: Iterable[_PairLike], report: CleaningReport) -> list[P]:
    """``pairs`` without those whose normalised source or target is a test pair's."""
    keys = test_keys_of(test)
    if TEST_RULE not in report.settings.rules or not (keys[0] or keys[1]):
        return pairs
    columns = cleaning_columns(
        [p.source for p in pairs], [p.target for p in pairs], report.settings
    )
    cleaning = CleaningPass(report)
    kept = cleaning.overlap(list(range(len(pairs))), columns, keys)
    _drops_in_memory(report, cleaning, pairs)
    return [pairs[r] for r in kept]
