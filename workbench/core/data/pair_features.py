"""What cleaning and training need of every pair, computed in parallel over Arrow shards.

Everything here depends on one pair alone (its per-pair rule, the keys of its normalised
sides, its token ids and lengths), so the corpus is cut into shards and ``num_proc``
processes compute them, each writing its shard's columns to its own Arrow file. The
parent never holds the corpus: it maps the files back in order, and the one pass whose
result depends on order (duplicates, repeats: :class:`~.cleaning_pass.CleaningPass`) runs
over the numbers alone.

Workers are forked, so they share the tokenizer and the memory-mapped corpus with the
parent instead of pickling them; a corpus of under :data:`PARALLEL_MIN` pairs (the demo's
4,354) is done in this process, where starting workers would cost more than it saves.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.data.arrow_pairs import read_table
from workbench.core.data.cleaning import CleaningSettings, cleaning_columns
from workbench.core.data.tokenize import PairTokenizer

#: Pairs per shard: a few seconds of work, so progress moves and memory stays bounded.
SHARD_ROWS = 20_000
#: Below this many pairs, no worker processes.
PARALLEL_MIN = 40_000

#: (pairs done, pairs in all) after each shard.
OnShard = Callable[[int, int], None]


def default_num_proc() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def feature_schema(tokenized: bool) -> Any:
    """A shard file's columns: the cleaning keys, and the training ids if the run tokenizes."""
    import pyarrow as pa

    fields = [
        ("rule", pa.int8()),
        ("source_key", pa.int64()),
        ("target_key", pa.int64()),
        ("pair_key", pa.int64()),
    ]
    if tokenized:
        fields += [
            ("input_ids", pa.list_(pa.int32())),
            ("attention_mask", pa.list_(pa.int8())),
            ("labels", pa.list_(pa.int32())),
            ("source_tokens", pa.int32()),
            ("target_tokens", pa.int32()),
        ]
    return pa.schema(fields)


@dataclass(frozen=True)
class FeatureJob:
    """One corpus's features: where its pairs are, the rules, the tokenizer (if any)."""

    corpus: Path
    folder: Path
    settings: CleaningSettings
    tokenizer: PairTokenizer | None

    def shard_file(self, index: int) -> Path:
        """Where shard ``index`` writes its columns; the parent maps them back in order."""
        return self.folder / f"features-{index:05d}.arrow"

    def shard_files(self, rows: int) -> list[Path]:
        """Every shard's file, in order, for a corpus of ``rows`` pairs."""
        return [self.shard_file(index) for index in range(max(1, -(-rows // SHARD_ROWS)))]

    def run_shard(self, index: int) -> int:
        """Compute and write shard ``index``; its number of pairs.

        The cyclic garbage collector is off meanwhile: a shard makes about a million
        small lists, strings and ints, none in a cycle, and the collector's passes over
        them took a fifth of the shard's time."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._run_shard(index)
        finally:
            if collecting:
                gc.enable()

    def _run_shard(self, index: int) -> int:
        import pyarrow as pa

        part = read_table(self.corpus).slice(index * SHARD_ROWS, SHARD_ROWS)
        sources = part.column("source").to_pylist()
        targets = part.column("target").to_pylist()
        columns: dict[str, list[Any]] = dict(cleaning_columns(sources, targets, self.settings))
        if self.tokenizer is not None:
            columns.update(self.tokenizer.encode(sources, targets))
        schema = feature_schema(self.tokenizer is not None)
        table = pa.Table.from_pydict(columns, schema=schema)
        with pa.ipc.new_stream(str(self.shard_file(index)), schema) as writer:
            writer.write_table(table)
        return len(sources)


_JOB: FeatureJob | None = None  # the job forked workers inherit


def _run_inherited(index: int) -> int:
    assert _JOB is not None
    return _JOB.run_shard(index)


def _worker_signals() -> None:
    """A worker dies of SIGTERM (the pool's way to stop it) and leaves Ctrl-C to the
    parent: the handlers a run installs (stop with a checkpoint) are the parent's."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)


def compute_features(
    job: FeatureJob, rows: int, num_proc: int, on_shard: OnShard | None = None
) -> Any:
    """The features of the corpus's ``rows`` pairs as one memory-mapped table, in order."""
    import pyarrow as pa

    global _JOB
    shards = max(1, -(-rows // SHARD_ROWS))
    done = 0
    if rows < PARALLEL_MIN or num_proc <= 1 or shards == 1:
        for index in range(shards):
            done += job.run_shard(index)
            if on_shard is not None:
                on_shard(done, rows)
    else:
        _JOB = job
        context = multiprocessing.get_context("fork")
        pool = context.Pool(min(num_proc, shards), initializer=_worker_signals)
        try:
            for count in pool.imap_unordered(_run_inherited, range(shards)):
                done += count
                if on_shard is not None:
                    on_shard(done, rows)
            pool.close()
        except BaseException:
            pool.terminate()
            raise
        finally:
            pool.join()
            _JOB = None
    tables = [read_table(path) for path in job.shard_files(rows)]
    return pa.concat_tables(tables)


class Rate:
    """Pairs per second and the time left, for progress lines every ``every`` seconds."""

    def __init__(self, every: float = 2.0) -> None:
        self.started = time.monotonic()
        self.every = every
        self.last = -every

    def due(self, done: int, total: int) -> bool:
        """Whether a progress line is due: ``every`` seconds after the last one, and at the end."""
        now = time.monotonic() - self.started
        if (total and done >= total) or now - self.last >= self.every:
            self.last = now
            return True
        return False

    def figures(self, done: int, total: int) -> tuple[float, float | None]:
        """Pairs per second so far, and the seconds left (None while the total is unknown)."""
        seconds = max(1e-6, time.monotonic() - self.started)
        rate = done / seconds
        return rate, ((total - done) / rate if rate and total else None)


class StageClock:
    """Seconds each stage of preparing took, said once the data is ready: a user who waits
    a minute for a million pairs sees where it went, and so does benchmarks/data_scale.py."""

    def __init__(self) -> None:
        self.started = self.last = time.perf_counter()
        self.stages: dict[str, float] = {}

    def lap(self, stage: str) -> None:
        """``stage`` ended now."""
        now = time.perf_counter()
        self.stages[stage], self.last = now - self.last, now

    def text(self) -> str:
        """``52.1 s: reading 6.0 s · cleaning and tokenizing 30.5 s · …``."""
        parts = " · ".join(f"{stage} {seconds:.1f} s" for stage, seconds in self.stages.items())
        return f"{self.last - self.started:.1f} s: {parts}"
