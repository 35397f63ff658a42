"""The cleaning rules over a whole corpus (:class:`CleaningPass`), and over pairs in
memory (:func:`clean_pairs`, :func:`drop_test_overlap`): the part of cleaning whose
verdicts depend on order, run over the keys :func:`~.cleaning.cleaning_columns` gives."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from workbench.core.data.cleaning import (
    NO_KEY,
    PAIR_RULES,
    TEST_RULE,
    CleaningReport,
    CleaningSettings,
    Dropped,
    P,
    TokenCounter,
    _PairLike,
    cleaning_columns,
    key_of,
    normalised,
)

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
    earlier such pair. ``tests/unit/test_data_scale.py`` checks this against the loop.

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
    ) -> Any:
        """The rows that pass, in order, as an int64 array (a corpus's worth of row
        numbers: as a list of ints they would cost several times as much)."""
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
        return self.overlap(unique, columns, test_keys)

    def _long(self, rows: Any, lengths: RowLengths) -> Any:
        import numpy as np

        s = self.report.settings
        self.report.long_measured = True
        source_lengths, target_lengths = (np.asarray(n, dtype=np.int64) for n in lengths(rows))
        over = (source_lengths > s.max_source_length) | (target_lengths > s.max_target_length)
        self._take("long", rows[over], kept=not s.drop_long)
        return rows[~over] if s.drop_long else rows

    def overlap(
        self, rows: Any, columns: dict[str, Any], test_keys: tuple[set[int], set[int]]
    ) -> Any:
        """``rows`` (row numbers, in any order) without those whose normalised source or
        target is a test pair's, in their order, as an int64 array."""
        import numpy as np

        sources, targets = test_keys
        at = np.asarray(rows, dtype=np.int64)
        if TEST_RULE not in self.report.settings.rules or not (sources or targets):
            return at
        source_keys = np.asarray(columns["source_key"], dtype=np.int64)[at]
        target_keys = np.asarray(columns["target_key"], dtype=np.int64)[at]
        hit = np.isin(source_keys, np.fromiter(sources, np.int64, len(sources))) | np.isin(
            target_keys, np.fromiter(targets, np.int64, len(targets))
        )
        self._take(TEST_RULE, at[hit])
        return at[~hit]


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
    return [pairs[r] for r in kept.tolist()], report


def drop_test_overlap(pairs: list[P], test: Iterable[_PairLike], report: CleaningReport) -> list[P]:
    """``pairs`` without those whose normalised source or target is a test pair's."""
    keys = test_keys_of(test)
    if TEST_RULE not in report.settings.rules or not (keys[0] or keys[1]):
        return pairs
    columns = cleaning_columns(
        [p.source for p in pairs], [p.target for p in pairs], report.settings
    )
    cleaning = CleaningPass(report)
    kept = cleaning.overlap(range(len(pairs)), columns, keys)
    _drops_in_memory(report, cleaning, pairs)
    return [pairs[r] for r in kept.tolist()]
