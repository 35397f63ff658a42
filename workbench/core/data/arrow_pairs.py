"""Sentence pairs as Arrow on disk: written as they are read, memory-mapped when used.

A corpus of millions of pairs held as Python strings costs several times its size in
memory; as Arrow columns in a file it costs the pages the operating system keeps mapped.
Readers (:mod:`.local_files`, the HSK corpus, a Hub sample) yield pairs one at a time;
:func:`write_pairs` strips them and writes them in batches; :class:`PairTable` reads them
back as a sequence of :class:`~workbench.core.data.pair.Pair`-like rows without loading
them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from workbench.core.data.pair import Pair

#: Pairs per Arrow record batch: large enough for fast columns, small enough to bound the
#: memory a batch takes while it is built.
BATCH_ROWS = 50_000
#: The text columns every table has; any other column is metadata (``hsk_level``, ...).
TEXT_COLUMNS = ("source", "target")


def write_pairs(
    rows: Iterable[tuple[str, str] | tuple[str, str, dict[str, Any]]],
    path: Path,
    on_rows: Callable[[int], None] | None = None,
) -> int:
    """Write ``rows`` (source, target and optional metadata) to an Arrow stream file at
    ``path``, both sides stripped; the number written. ``on_rows`` hears the running
    count after each batch."""
    import pyarrow as pa

    writer: Any = None
    columns: dict[str, list[Any]] = {}
    count = 0

    def flush() -> None:
        nonlocal writer
        if not columns.get("source"):
            return
        batch = pa.RecordBatch.from_pydict(columns)
        if writer is None:
            writer = pa.ipc.new_stream(str(path), batch.schema)
        writer.write_batch(batch)
        for values in columns.values():
            values.clear()
        if on_rows is not None:
            on_rows(count)

    try:
        for row in rows:
            if not columns:
                columns = {"source": [], "target": []}
                if len(row) == 3:
                    columns.update({name: [] for name in row[2]})
            columns["source"].append(row[0].strip())
            columns["target"].append(row[1].strip())
            if len(row) == 3:
                for name, value in row[2].items():
                    columns[name].append(value)
            count += 1
            if count % BATCH_ROWS == 0:
                flush()
        flush()
        if writer is None:  # no rows: an empty table, so that a reader finds a file
            schema = pa.schema([(name, pa.string()) for name in TEXT_COLUMNS])
            writer = pa.ipc.new_stream(str(path), schema)
    finally:
        if writer is not None:
            writer.close()
    return count


def read_table(path: Path, in_memory: bool = False) -> Any:
    """The Arrow stream file at ``path`` as a pyarrow table over its memory-mapped bytes
    (or read whole, ``in_memory``, for a file about to be removed)."""
    import pyarrow as pa

    source = pa.OSFile(str(path)) if in_memory else pa.memory_map(str(path))
    return pa.ipc.open_stream(source).read_all()


def take_rows(table: Any, rows: Any) -> Any:
    """The rows ``rows`` (row numbers, any order, repeats allowed) of a pyarrow table, in
    that order, gathered record batch by record batch.

    ``Table.take`` on a table of many record batches (every table read from a file here)
    first concatenates each whole column (pyarrow 26: taking 3 rows of a 1M-pair corpus
    allocated 125 MiB), so a few rows of a large table cost the table's size. Here the
    rows are sorted, each batch gives its own (in file order), and only what was gathered
    is put back in the asked order.
    """
    import numpy as np
    import pyarrow as pa

    at = np.asarray(rows, dtype=np.int64)
    if len(at) and (at.min() < 0 or at.max() >= table.num_rows):
        raise IndexError(f"row numbers outside a table of {table.num_rows} rows")
    by_row = np.argsort(at, kind="stable")
    ascending = at[by_row]
    batches = table.to_batches()
    starts = np.cumsum([0, *(batch.num_rows for batch in batches)])
    cuts = np.searchsorted(ascending, starts)
    pieces = [
        batch.take(pa.array(ascending[cuts[i] : cuts[i + 1]] - starts[i]))
        for i, batch in enumerate(batches)
        if cuts[i + 1] > cuts[i]
    ]
    gathered = pa.Table.from_batches(pieces, schema=table.schema).combine_chunks()
    if np.array_equal(by_row, np.arange(len(at))):
        return gathered
    back = np.empty_like(by_row)
    back[by_row] = np.arange(len(at))  # where each asked row landed in file order
    return gathered.take(pa.array(back))


class PairTable(Sequence[Any]):
    """Pairs in an Arrow table, read on demand: ``len``, index, slice and iterate as a
    list of :class:`~workbench.core.data.pair.Pair`, and whole columns where a caller
    needs all of one side (a scratch model's vocabulary).

    ``tokenized`` tells whether the table also holds the training ids of
    :mod:`.tokenize` (``input_ids``, ``attention_mask``, ``labels``, ``length``), and
    ``fingerprint`` which tokenizer made them. Only :meth:`token_dataset` needs
    ``datasets`` (the Trainer reads a ``datasets.Dataset``): browsing the pairs does not
    import it.
    """

    def __init__(
        self, table: Any, fingerprint: str | None = None, path: Path | None = None
    ) -> None:
        self.table = table
        self.fingerprint = fingerprint
        self.path = path  # the file the table maps, if it stays
        names = table.column_names
        self.tokenized = fingerprint is not None and "input_ids" in names
        self._meta = [n for n in names if n not in TEXT_COLUMNS and n not in _TOKEN_NAMES]
        self._table = table

    def __len__(self) -> int:
        return int(self._table.num_rows)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            rows = range(len(self))[index]
            if rows.step == 1:
                return self._pairs(self._table.slice(rows.start, len(rows)))
            return self._pairs(take_rows(self._table, rows)) if rows else []
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._pairs(self._table.slice(index, 1))[0]

    def __iter__(self) -> Iterator[Any]:
        for start in range(0, len(self), BATCH_ROWS):
            yield from self._pairs(self._table.slice(start, BATCH_ROWS))

    def __add__(self, other: Sequence[Any]) -> list[Any]:
        return [*self, *other]

    def __radd__(self, other: Sequence[Any]) -> list[Any]:
        return [*other, *self]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PairTable | list):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by contents, as a list is

    def take(self, rows: Sequence[int]) -> list[Any]:
        """The pairs at ``rows``, in that order."""
        return self._pairs(take_rows(self._table, rows)) if len(rows) else []

    def column(self, name: str) -> list[Any]:
        """One whole column as a list (``source``, ``target``, ``length``)."""
        return list(self._table.column(name).to_pylist())

    def sources(self) -> list[str]:
        """The source side as one list, read from its column without building a pair per row."""
        return self.column("source")

    def targets(self) -> list[str]:
        """The target side as one list, read from its column without building a pair per row."""
        return self.column("target")

    def token_dataset(self) -> Any:
        """The training ids alone, as the Trainer reads them (a ``datasets.Dataset``
        over the same memory-mapped columns)."""
        from datasets import Dataset
        from datasets.table import InMemoryTable

        names = ["input_ids", "attention_mask", "labels"]
        if self.path is not None:
            return Dataset.from_file(str(self.path)).select_columns(names)
        return Dataset(InMemoryTable(self._table.select(names)))

    def _pairs(self, table: Any) -> list[Any]:
        sources = table.column("source").to_pylist()
        targets = table.column("target").to_pylist()
        if not self._meta:
            return [Pair(s, t) for s, t in zip(sources, targets, strict=True)]
        meta = {name: table.column(name).to_pylist() for name in self._meta}
        return [
            Pair(s, t, {name: meta[name][i] for name in self._meta})
            for i, (s, t) in enumerate(zip(sources, targets, strict=True))
        ]


_TOKEN_NAMES = ("input_ids", "attention_mask", "labels", "length")
