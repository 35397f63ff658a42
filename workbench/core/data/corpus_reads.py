"""A corpus being prepared, read in file order, batch by batch, never memory-mapped: the
held-out and dropped pairs gathered from it, and the training split written in its
shuffled order, in memory that does not grow with the corpus.

Why not gather from the memory-mapped table: every page a process touches in a mapping
stays counted in its memory until the mapping goes, and a gather in shuffled order
touches every page of the corpus and of its token ids (the kernel maps up to 16 pages
around each one it faults in), while pyarrow's ``Table.take`` concatenated each whole
column first on top of that. Preparing 5M pairs peaked at 4,105 MiB, the anchor at 1,593
(``benchmarks/DATA_SCALE.md``). Read here, a batch costs its own size while it is used:
writing a training split of 1M and 2M synthetic pairs with their token ids peaked at
993 and 1,883 MiB (PSS) from the mapped table, at 298 and 324 MiB this way.

The training split keeps the order :func:`~.splits.split_rows` gave it (the Trainer's
sampler indexes it, so the demo's numbers depend on it) without reading in that order:
pass one reads the corpus in file order and files each training row under the chunk of
:data:`~.arrow_pairs.BATCH_ROWS` output rows it belongs to, in a scratch Arrow *file*
(random access by batch); pass two reads each chunk's pieces back, puts them in order
and writes the chunk. Both passes hold one batch or one chunk at a time; the price is a
second write of the training split and (corpus batches x output chunks) small record
batches in the scratch file (9,000 at 5M pairs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.data.arrow_pairs import BATCH_ROWS
from workbench.core.data.tokenize import TOKEN_COLUMNS

#: The scratch column that carries each training row's place in the written split.
_POSITION = "__position"


@dataclass(frozen=True)
class CorpusFiles:
    """A corpus's Arrow stream file and, when it was tokenized, its feature shards (the
    same rows, in order, in files of their own): read as one table of the pairs and
    their training ids (:data:`~.tokenize.TOKEN_COLUMNS` and ``length``)."""

    corpus: Path
    shards: tuple[Path, ...] = ()

    def schema(self) -> Any:
        """The columns :meth:`batches` gives."""
        import pyarrow as pa

        schema = _schema(self.corpus)
        if self.shards:
            tokens = _schema(self.shards[0])
            for name in TOKEN_COLUMNS:
                schema = schema.append(tokens.field(name))
            schema = schema.append(pa.field("length", pa.int32()))
        return schema

    def batches(self) -> Iterator[tuple[int, Any]]:
        """``(first row, table)`` for each batch of the corpus, in file order, with its
        rows' token columns beside it when tokenized."""
        import pyarrow as pa
        import pyarrow.compute as pc

        tokens = _Rows(_stream(self.shards)) if self.shards else None
        start = 0
        for batch in _stream([self.corpus]):
            table = pa.Table.from_batches([batch])
            if tokens is not None:
                ids = tokens.next(batch.num_rows)
                for name in TOKEN_COLUMNS:
                    table = table.append_column(name, ids.column(name))
                length = pc.list_value_length(ids.column("input_ids")).cast(pa.int32())
                table = table.append_column("length", length)
            yield start, table
            start += batch.num_rows


def in_file_order(files: CorpusFiles, rows: Sequence[int] | Any) -> Iterator[Any]:
    """The rows ``rows`` (row numbers of the corpus, any order, repeats allowed) sorted,
    as one table per corpus batch that holds any: one pass, one batch at a time."""
    import numpy as np
    import pyarrow as pa

    ascending = np.sort(np.asarray(rows, dtype=np.int64))
    found = 0
    for start, table in files.batches():
        low, high = np.searchsorted(ascending, [start, start + table.num_rows])
        if high > low:
            found += high - low
            yield table.take(pa.array(ascending[low:high] - start))
    if found != len(ascending):
        raise IndexError("row numbers outside the corpus")


def gather(files: CorpusFiles, rows: Sequence[int] | Any) -> Any:
    """The rows ``rows`` (row numbers of the corpus, any order) as one table, in that
    order: read in one pass over the corpus, holding only what is gathered."""
    import numpy as np
    import pyarrow as pa

    at = np.asarray(rows, dtype=np.int64)
    pieces = list(in_file_order(files, at))
    gathered = pa.concat_tables(pieces) if pieces else files.schema().empty_table()
    by_row = np.argsort(at, kind="stable")
    back = np.empty_like(by_row)
    back[by_row] = np.arange(len(at))  # where each asked row landed in file order
    return gathered.take(pa.array(back)).combine_chunks()


def write_in_order(
    files: CorpusFiles,
    rows: Sequence[int] | Any,
    path: Path,
    on_rows: Callable[[int, int], None] | None = None,
) -> None:
    """Write the corpus's rows ``rows`` (the training split, in its shuffled order) to an
    Arrow stream file at ``path``, in that order, one record batch per
    :data:`~.arrow_pairs.BATCH_ROWS` rows: the two passes of this module's docstring.
    ``on_rows(done, total)`` hears the progress, ``done`` counting half a row per pass."""
    import numpy as np
    import pyarrow as pa

    at = np.asarray(rows, dtype=np.int64)
    total = len(at)
    chunks = max(1, -(-total // BATCH_ROWS))
    by_row = np.argsort(at, kind="stable")  # the output positions, in file order
    ascending = at[by_row]
    schema = files.schema()
    scratch = path.with_name(f"{path.name}.scratch")
    pieces: list[list[int]] = [[] for _ in range(chunks)]  # each chunk's scratch batches
    try:
        placed = written = filed = 0
        with pa.ipc.new_file(str(scratch), schema.append(pa.field(_POSITION, pa.int64()))) as out:
            for start, table in files.batches():
                low, high = np.searchsorted(ascending, [start, start + table.num_rows])
                positions = by_row[low:high]
                chunk_of = positions // BATCH_ROWS
                grouped = np.argsort(chunk_of, kind="stable")
                part = table.take(pa.array(ascending[low:high][grouped] - start))
                part = part.append_column(_POSITION, pa.array(positions[grouped]))
                bounds = np.searchsorted(chunk_of[grouped], np.arange(chunks + 1))
                for chunk in np.flatnonzero(np.diff(bounds)).tolist():
                    share = part.slice(bounds[chunk], bounds[chunk + 1] - bounds[chunk])
                    for batch in share.combine_chunks().to_batches():
                        pieces[chunk].append(filed)
                        out.write_batch(batch)
                        filed += 1
                placed += high - low
                if on_rows is not None:
                    on_rows(placed // 2, total)
        if placed != total:
            raise IndexError("row numbers outside the corpus")
        with pa.OSFile(str(scratch)) as source, pa.ipc.new_stream(str(path), schema) as final:
            reader = pa.ipc.open_file(source)
            for chunk in range(chunks):
                batches = [reader.get_batch(index) for index in pieces[chunk]]
                part = pa.Table.from_batches(batches, schema=reader.schema)
                order = np.argsort(part.column(_POSITION).to_numpy(), kind="stable")
                part = part.take(pa.array(order)).drop_columns([_POSITION])
                final.write_table(part.combine_chunks())
                written += part.num_rows
                if on_rows is not None:
                    on_rows((total + written) // 2, total)
    finally:
        scratch.unlink(missing_ok=True)


def _schema(path: Path) -> Any:
    import pyarrow as pa

    with pa.OSFile(str(path)) as source:
        return pa.ipc.open_stream(source).schema


def _stream(paths: Sequence[Path]) -> Iterator[Any]:
    """The record batches of Arrow stream files, one file after another, each read into
    memory when its turn comes (``pa.OSFile``: read, not mapped)."""
    import pyarrow as pa

    for path in paths:
        with pa.OSFile(str(path)) as source:
            yield from pa.ipc.open_stream(source)


class _Rows:
    """Hands out the next ``count`` rows of a stream of record batches as one table, so
    that files cut at other row counts (feature shards) line up with the corpus's
    batches."""

    def __init__(self, batches: Iterator[Any]) -> None:
        self._batches = batches
        self._pending: list[Any] = []
        self._have = 0

    def next(self, count: int) -> Any:
        import pyarrow as pa

        while self._have < count:
            batch = next(self._batches, None)
            if batch is None:
                raise ValueError("the feature shards hold fewer rows than the corpus")
            self._pending.append(batch)
            self._have += batch.num_rows
        table = pa.Table.from_batches(self._pending)
        self._pending = table.slice(count).to_batches()
        self._have -= count
        return table.slice(0, count)
