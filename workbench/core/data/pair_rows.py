"""Labelled pairs to browse (train, validation and test, or what cleaning dropped), found
and paged without reading them all: the Dataset pane's rows at the scale of millions.

A segment is a label and a sequence of pairs: a prepared :class:`~.arrow_pairs.PairTable`
(memory-mapped) or a list. A filter over a table runs in Arrow's compute kernels and
keeps row numbers; only a page of pairs is ever turned into Python objects.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from workbench.core.data.arrow_pairs import PairTable

#: (label, pair): one row of the pane.
Row = tuple[str, Any]


class PairRows(Sequence[Row]):
    """Segments of pairs, each with the row numbers that match (all of them at first)."""

    def __init__(
        self,
        segments: Sequence[tuple[str, Sequence[Any]]],
        picks: Sequence[Sequence[int]] | None = None,
    ) -> None:
        self.segments = list(segments)
        self.picks = list(picks) if picks is not None else [range(len(s)) for _, s in segments]
        self._spread: dict[int, list[Row]] = {}

    def __len__(self) -> int:
        return sum(len(p) for p in self.picks)

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...
    def __getitem__(self, index: int | slice) -> Row | list[Row]:
        if isinstance(index, slice):
            return self._rows(range(len(self))[index])
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._rows(range(index, index + 1))[0]

    def __iter__(self) -> Iterator[Row]:
        for start in range(0, len(self), 10_000):
            yield from self[start : start + 10_000]

    def _rows(self, wanted: range) -> list[Row]:
        """The rows at positions ``wanted`` (ascending), fetched segment by segment."""
        found: list[Row] = []
        offset = 0
        positions = list(wanted)
        for (label, pairs), pick in zip(self.segments, self.picks, strict=True):
            mine = [pick[i - offset] for i in positions if offset <= i < offset + len(pick)]
            if mine:
                chosen = (
                    pairs.take(mine) if isinstance(pairs, PairTable) else [pairs[i] for i in mine]
                )
                found.extend((label, p) for p in chosen)
            offset += len(pick)
        return found

    def matching(self, needle: str, labels_match: bool = False) -> PairRows:
        """The rows whose source or target contains ``needle`` (case-insensitive; with
        ``labels_match``, also those whose label does)."""
        needle = needle.strip().lower()
        if not needle:
            return PairRows(self.segments)
        picks: list[Sequence[int]] = []
        for label, pairs in self.segments:
            if labels_match and needle in label.lower():
                picks.append(range(len(pairs)))
            elif isinstance(pairs, PairTable):
                picks.append(_table_matches(pairs, needle))
            else:
                picks.append(
                    [
                        i
                        for i, p in enumerate(pairs)
                        if needle in p.source.lower() or needle in p.target.lower()
                    ]
                )
        return PairRows(self.segments, picks)

    def spread(self, most: int) -> list[Row]:
        """At most ``most`` rows, evenly spaced: enough to measure lengths and widths
        (read once per size)."""
        if most not in self._spread:
            self._spread[most] = self[:: max(1, -(-len(self) // most))]
        return self._spread[most]


def _table_matches(table: PairTable, needle: str) -> list[int]:
    import pyarrow.compute as pc

    arrow = table.table
    found = pc.or_(
        pc.match_substring(arrow.column("source"), needle, ignore_case=True),
        pc.match_substring(arrow.column("target"), needle, ignore_case=True),
    )
    return list(pc.indices_nonzero(found).to_pylist())
