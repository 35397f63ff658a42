"""A seeded sample's reads from the parquet files of a Hub dataset: the planned row groups
(see :mod:`workbench.core.data.sample_plan`), each file by a thread of its own, through
files opened for checked range reads (:mod:`workbench.core.data.parquet_files`), with
what an earlier try kept taken from the cache instead of fetched again."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import Any

import numpy as np

from workbench.core.data.hub_retries import RetriesAbandoned, stopping_with
from workbench.core.data.parquet_files import decoding, open_parquet, pair_columns, pair_of_row
from workbench.core.data.sample_cache import PartialSample
from workbench.core.data.sample_plan import HubPair, plan_sample
from workbench.core.events import EventSink, SampleProgress

#: Files read at the same time: over a network each row group is one request, so the
#: round trips, not the bytes, set the time; one thread per file divides them.
READ_THREADS = 8


def _group_bytes(metadata: Any, group: int, columns: list[str]) -> int:
    """Bytes a read of ``columns`` of row group ``group`` fetches (compressed, as stored)."""
    row_group = metadata.row_group(group)
    chunks = (row_group.column(c) for c in range(row_group.num_columns))
    return sum(c.total_compressed_size for c in chunks if c.path_in_schema.split(".")[0] in columns)


class _Progress:
    """Counts the row groups in hand and sends :class:`SampleProgress` about 20 times
    over a sample, from any thread (one line a row group would be 6,300 on WMT19)."""

    def __init__(
        self, sizes: dict[tuple[int, int], int], kept: set[tuple[int, int]], sink: EventSink | None
    ) -> None:
        self.sizes, self.sink = sizes, sink
        self.done, self.kept = len(kept), len(kept)
        self.bytes = sum(sizes[key] for key in kept)
        self.step = max(1, len(sizes) // 20)
        self._lock = threading.Lock()
        self._send()

    def _send(self) -> None:
        if self.sink is not None:
            total = sum(self.sizes.values())
            self.sink(SampleProgress(self.done, len(self.sizes), self.bytes, total, self.kept))

    def add(self, key: tuple[int, int]) -> None:
        with self._lock:
            self.done += 1
            self.bytes += self.sizes[key]
            if self.done % self.step == 0 or self.done == len(self.sizes):
                self._send()


#: A planned row group: its index in the file and the offsets of the rows taken from it.
RowGroup = tuple[int, list[int]]


class _SampleReads:
    """The reads of one sample: each file's footer, then the row groups it lacks, by one
    thread per file. The first failure (or Ctrl-C) stops the other threads before their
    next request; what arrived before it is in ``kept``."""

    def __init__(
        self,
        stack: ExitStack,
        fs: Any,
        files: list[str],
        languages: tuple[str, str],
        kept: PartialSample | None,
    ) -> None:
        self.stack, self.fs, self.files = stack, fs, files
        self.languages, self.kept = languages, kept
        self.stop = threading.Event()
        self.metadata: list[Any] = [kept.footer(path) if kept else None for path in files]
        self.found: dict[tuple[int, int], list[HubPair]] = {}
        self.progress: _Progress | None = None
        self.failure: BaseException | None = None  # the first, which stopped the others
        self._lock = threading.Lock()
        self._handles: dict[int, tuple[Any, str]] = {}  # each file used by one thread at a time

    def _open(self, f: int) -> tuple[Any, str]:
        if f not in self._handles:
            self._handles[f] = open_parquet(self.stack, self.fs, self.files[f], self.metadata[f])
        return self._handles[f]

    def footer(self, f: int) -> None:
        """Read (and keep) file ``f``'s parquet metadata, unless an earlier try kept it."""
        with self._stopping_others():
            if self.metadata[f] is None and not self.stop.is_set():
                self.metadata[f] = self._open(f)[0].metadata
                if self.kept is not None:
                    self.kept.keep_footer(self.files[f], self.metadata[f])

    def take_kept(self, plan: dict[tuple[int, int], list[int]]) -> dict[int, list[RowGroup]]:
        """Take the planned row groups an earlier try kept; the others, by file."""
        missing: dict[int, list[RowGroup]] = {}
        for (f, g), offsets in sorted(plan.items()):
            rows = self.kept.rows(self.files[f], g, offsets, self.languages) if self.kept else None
            if rows is None:
                missing.setdefault(f, []).append((g, offsets))
            else:
                self.found[(f, g)] = rows
        return missing

    def row_groups(self, f: int, groups: list[RowGroup]) -> None:
        """Read (and keep) the rows at ``offsets`` of each row group of file ``f``."""
        with self._stopping_others():
            handle, url = self._open(f)
            columns = pair_columns(self.metadata[f], *self.languages)
            for g, offsets in groups:
                if self.stop.is_set():
                    return
                with decoding(url):
                    table = handle.read_row_group(g, columns=columns).take(offsets)
                pairs = [pair_of_row(r, *self.languages) for r in table.to_pylist()]
                if self.kept is not None:
                    self.kept.keep_rows(self.files[f], g, offsets, pairs, self.languages)
                self.found[(f, g)] = pairs
                if self.progress is not None:
                    self.progress.add((f, g))

    @contextmanager
    def _stopping_others(self) -> Iterator[None]:
        try:
            yield
        except BaseException as err:
            with self._lock:
                if self.failure is None and not isinstance(err, RetriesAbandoned):
                    self.failure = err
            self.stop.set()
            raise


def _url_prefix(fs: Any, files: list[str]) -> str | None:
    """What the URLs of ``files`` on the Hub begin with (None off the Hub)."""
    url = getattr(fs, "url", None)
    if not callable(url) or not files:
        return None
    try:
        urls = [str(url(path)) for path in files]
    except Exception:  # only to stop retries early: never fail because of it
        return None
    common = os.path.commonprefix(urls)  # noqa: RUF071 (characters, not path parts, wanted)
    return common[: common.rfind("/") + 1]


def _wait_for(jobs: list[Future[None]]) -> None:
    """Wait for ``jobs``, raising the first failure as soon as it happens.

    The main thread waits in a queue read that holds no lock a reading thread needs: the
    KeyboardInterrupt of a second Ctrl-C is raised where the main thread waits, and inside
    ``concurrent.futures.wait``, which takes every job's lock in turn, it can leave one
    held; the reading thread that then ends its job waits for that lock forever, and so does
    the command. In short waits, so that Ctrl-C is seen at once: the signal may land on a
    reading thread, and a main thread blocked in one long wait would not wake up for it.
    """
    finished: queue.SimpleQueue[Future[None]] = queue.SimpleQueue()
    for job in jobs:
        job.add_done_callback(finished.put)
    for _ in jobs:
        while True:
            try:
                done = finished.get(timeout=0.2)
                break
            except queue.Empty:
                pass
        done.result()


def read_sample(
    fs: Any,
    files: list[str],
    n: int,
    seed: int,
    source_lang: str,
    target_lang: str,
    kept: PartialSample | None = None,
    on_event: EventSink | None = None,
) -> list[HubPair]:
    """Read the planned rows from parquet ``files`` on filesystem ``fs`` (range reads).

    Each file is read by its own thread (at most ``READ_THREADS`` at once) through its own
    open file; the result does not depend on the order the threads finish in. With
    ``kept``, each file's footer and each row group is kept as it arrives and what an
    earlier try kept is not fetched again: the rows, and their order, are the same.
    """
    with ExitStack() as stack:
        reads = _SampleReads(stack, fs, files, (source_lang, target_lang), kept)
        stack.enter_context(stopping_with(reads.stop, _url_prefix(fs, files)))
        pool = stack.enter_context(
            ThreadPoolExecutor(max_workers=min(READ_THREADS, len(files) or 1))
        )
        try:
            _wait_for([pool.submit(reads.footer, f) for f in range(len(files))])
            metadata = reads.metadata
            sizes = [[m.row_group(g).num_rows for g in range(m.num_row_groups)] for m in metadata]
            plan = plan_sample(sizes, n, seed)
            missing = reads.take_kept(plan)
            columns = [pair_columns(m, source_lang, target_lang) for m in metadata]
            reads.progress = _Progress(
                {(f, g): _group_bytes(metadata[f], g, columns[f]) for f, g in plan},
                set(reads.found),
                on_event,
            )
            _wait_for([pool.submit(reads.row_groups, f, groups) for f, groups in missing.items()])
        except BaseException as err:
            reads.stop.set()  # Ctrl-C: the other threads end their current request only
            pool.shutdown(wait=True, cancel_futures=True)
            if isinstance(err, RetriesAbandoned) and reads.failure is not None:
                raise reads.failure from None  # what stopped this thread's retries
            raise
    pairs = [pair for key in sorted(plan) for pair in reads.found[key]]
    # The plan is ordered by file; shuffle so a later [:k] is not one domain either.
    order = np.random.default_rng(seed).permutation(len(pairs))
    return [pairs[i] for i in order]
