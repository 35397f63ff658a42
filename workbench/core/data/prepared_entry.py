"""One entry of the prepared-data cache: built from a corpus on disk, and opened again.

Building runs the steps :mod:`.prepared` describes, in order: the pairs written to Arrow
as they are read, every pair's rule verdict, keys and token ids computed in parallel, the
order-bound rules, the sample and the split over row numbers and keys, then the held-out
sets and the dropped pairs read in one pass over the corpus, and the training split
written in its shuffled order. What the entry holds beside ``train.arrow`` is one JSON
file (the held-out sets, the names of the sets, the cleaning counts, the settings),
written by :func:`build_entry` and read by :func:`load_entry`, here together so that its
shape is stated in one module. Which entry a run gets, and when one is built, is
:mod:`.prepared`'s.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from workbench.core.config.run_config import RunConfig
from workbench.core.data.arrow_pairs import (
    BATCH_ROWS,
    TEXT_COLUMNS,
    PairTable,
    read_table,
    write_pairs,
)
from workbench.core.data.cleaning import (
    NO_KEY,
    CleaningReport,
    CleaningSettings,
    Dropped,
    TokenCounter,
)
from workbench.core.data.cleaning_pass import CleaningPass, test_keys_of
from workbench.core.data.corpus_reads import (
    CorpusFiles,
    gather,
    in_file_order,
    write_in_order,
)
from workbench.core.data.dropped_pairs import read_dropped_pairs, write_dropped_pairs
from workbench.core.data.pair import Pair
from workbench.core.data.pair_features import (
    FeatureJob,
    Rate,
    StageClock,
    compute_features,
    default_num_proc,
)
from workbench.core.data.prepared_cache import HELD_OUT_FILE, TRAIN_FILE
from workbench.core.data.sources import Source, is_hub_dataset
from workbench.core.data.splits import SplitData, split_rows
from workbench.core.data.tokenize import PairTokenizer
from workbench.core.events import DataProgress, EventSink, Note
from workbench.errors import WorkbenchError

#: The feature columns the order-bound rules and the split work on, one value per row.
KEY_COLUMNS = ("rule", "source_key", "target_key", "pair_key")


@dataclass(frozen=True)
class EntryInputs:
    """What one entry is prepared from: everything its cache key names, as objects."""

    config: RunConfig
    source: Source
    #: The outside test set, already stripped of empty and repeated pairs ([] without one).
    test: list[Pair]
    #: The outside test set's pairs and name, or None when the test set is a share of the data.
    external: tuple[list[Pair], str] | None
    settings: CleaningSettings
    #: The model's tokenizer: its ids and lengths are prepared too (None: not tokenized).
    tokenizer: PairTokenizer | None
    #: The tokenizer's fingerprint, recorded in the entry (None without a tokenizer).
    fingerprint: str | None
    #: What measures the ``long`` rule without a tokenizer's ids (None: no measuring).
    count_tokens: TokenCounter | None


class _SplitRows(NamedTuple):
    """Each split's row numbers of the corpus, in its shuffled order, and the test set's name."""

    train: Any
    validation: Any
    test: Any
    test_name: str


def build_entry(inputs: EntryInputs, folder: Path, emit: EventSink, num_proc: int | None) -> None:
    """Prepare the data into ``folder``: the steps of this module's docstring."""
    corpus = folder / "corpus.arrow"
    laps = StageClock()
    count = _write_corpus(inputs.source, corpus, emit)
    laps.lap("reading")
    stage = "cleaning and tokenizing" if inputs.tokenizer else "cleaning"
    job = FeatureJob(corpus, folder, inputs.settings, inputs.tokenizer)
    procs = num_proc or inputs.config.num_proc or default_num_proc()
    features = _compute(job, count, procs, stage, emit)
    laps.lap(stage)
    plain = CorpusFiles(corpus)
    columns = {name: features.column(name).to_numpy() for name in KEY_COLUMNS}
    report = CleaningReport(inputs.settings, pairs_in=count)
    cleaning = CleaningPass(report)
    lengths = _lengths(inputs, features, plain)
    kept = cleaning.run(columns, lengths, test_keys_of(inputs.test))
    if not len(kept):
        raise WorkbenchError(
            f"no usable pairs in {inputs.source.origin} after cleaning "
            f"({' '.join(report.lines())}); check the file's columns and languages, or pass "
            "--no-clean"
        )
    kept, notes = _sampled(kept, inputs.config, report)
    rows = _split(kept, columns, cleaning, inputs)
    validation, test = _held_out_and_dropped(plain, rows, cleaning, inputs)
    write_dropped_pairs(folder, report)
    shards = tuple(job.shard_files(count)) if inputs.tokenizer else ()
    laps.lap("rules, sample, split and held-out sets")
    _write_train(CorpusFiles(corpus, shards), rows.train, folder / TRAIN_FILE, emit)
    laps.lap("writing")
    emit(Note(f"data: prepared {count:,} pairs in {laps.text()}"))
    config = inputs.config
    held = {
        "validation": [_pair_record(p) for p in validation],
        "test": [_pair_record(p) for p in test],
        "origin": inputs.source.origin,
        "validation_name": f"{config.validation_fraction:.0%} held out, seed {config.seed}",
        "test_name": rows.test_name,
        "revision": inputs.source.revision,
        "notes": notes,
        "cleaning": {
            "pairs_in": report.pairs_in,
            "counts": report.counts,
            "long_measured": report.long_measured,
        },
        "fingerprint": inputs.fingerprint,
        "settings": dataclasses.asdict(inputs.settings),
    }
    (folder / HELD_OUT_FILE).write_text(json.dumps(held, ensure_ascii=False), encoding="utf-8")
    corpus.unlink()
    for shard in folder.glob("features-*.arrow"):
        shard.unlink()


def _write_corpus(source: Source, corpus: Path, emit: EventSink) -> int:
    """Step 1: the source's pairs written to Arrow as they are read; how many there were."""
    reading = Rate()

    def on_rows(done: int) -> None:
        if done >= 2 * BATCH_ROWS and reading.due(done, 0):  # a small corpus: no lines
            emit(DataProgress("reading", done, 0, reading.figures(done, 0)[0]))

    return write_pairs(source.rows, corpus, on_rows)


def _compute(job: FeatureJob, count: int, procs: int, stage: str, emit: EventSink) -> Any:
    """Step 2: every pair's rule verdict, keys (and token ids) by ``procs`` processes."""
    working = Rate()

    def on_shard(done: int, total: int) -> None:
        if total >= 2 * BATCH_ROWS and working.due(done, total):
            emit(DataProgress(stage, done, total, *working.figures(done, total)))

    return compute_features(job, count, procs, on_shard)


def _lengths(inputs: EntryInputs, features: Any, plain: CorpusFiles) -> Any:
    """How the ``long`` rule measures rows: the prepared token counts, the counter over
    the rows' texts, or None (no measuring)."""
    import numpy as np

    if inputs.tokenizer is not None:
        source_tokens = features.column("source_tokens").to_numpy()
        target_tokens = features.column("target_tokens").to_numpy()

        def prepared(rows: Any) -> tuple[Any, Any]:
            return source_tokens[rows], target_tokens[rows]

        return prepared
    if inputs.count_tokens is None:
        return None
    counter = inputs.count_tokens

    def counted(rows: Any) -> tuple[Any, Any]:
        found = [
            counter(part.column("source").to_pylist(), part.column("target").to_pylist())
            for part in in_file_order(plain, rows)
        ]
        by_row = np.argsort(rows, kind="stable")  # back from file order to rows' order
        source, target = np.empty(len(rows), np.int64), np.empty(len(rows), np.int64)
        if found:  # each part's counts as an array: no Python int per pair
            source[by_row] = np.concatenate([np.asarray(s, np.int64) for s, _ in found])
            target[by_row] = np.concatenate([np.asarray(t, np.int64) for _, t in found])
        return source, target

    return counted


def _sampled(kept: Any, config: RunConfig, report: CleaningReport) -> tuple[Any, list[str]]:
    """The kept rows subsampled to ``config.samples``, and a note when a Hub sample left
    fewer than were asked for."""
    notes: list[str] = []
    if config.samples and len(kept) > config.samples:
        # Positions drawn as sample() draws items, so the same pairs in the same order.
        kept = kept[random.Random(config.seed).sample(range(len(kept)), config.samples)]
    elif config.samples and is_hub_dataset(config) and len(kept) < config.samples:
        notes.append(
            f"{len(kept):,} pairs left after cleaning {report.pairs_in:,} drawn, fewer than "
            f"the {config.samples:,} asked for; pass a larger --samples to draw more"
        )
    return kept, notes


def _split(
    kept: Any, columns: dict[str, Any], cleaning: CleaningPass, inputs: EntryInputs
) -> _SplitRows:
    """Step 3's split: train, validation and test rows, a test share's near-copies left out
    of the other two."""
    config, external = inputs.config, inputs.external
    # Row numbers, in each split's shuffled order: positions in kept, mapped to rows.
    shares = (config.validation_fraction, 0.0 if external is not None else config.test_fraction)
    train_rows, validation_rows, test_rows = (
        kept[at] for at in split_rows(len(kept), config.seed, *shares)
    )
    if external is not None:
        return _SplitRows(train_rows, validation_rows, test_rows, external[1])
    # A test share of the same data: its near-copies leave train and validation now.
    keys = (
        set(columns["source_key"][test_rows].tolist()) - {NO_KEY},
        set(columns["target_key"][test_rows].tolist()) - {NO_KEY},
    )
    train_rows = cleaning.overlap(train_rows, columns, keys)
    validation_rows = cleaning.overlap(validation_rows, columns, keys)
    test_name = f"{config.test_fraction:.0%} held out, seed {config.seed}"
    return _SplitRows(train_rows, validation_rows, test_rows, test_name)


def _held_out_and_dropped(
    plain: CorpusFiles, rows: _SplitRows, cleaning: CleaningPass, inputs: EntryInputs
) -> tuple[list[Pair], list[Pair]]:
    """The validation and test pairs, and each dropped pair into the cleaning report, read
    in one pass over the corpus (an outside test set is kept as it was given)."""
    import numpy as np

    drops = cleaning.drops
    drop_rows = np.fromiter((row for _, row, _ in drops), np.int64, len(drops))
    found = _pairs_of(gather(plain, np.concatenate([rows.validation, rows.test, drop_rows])))
    held = len(rows.validation) + len(rows.test)
    validation = found[: len(rows.validation)]
    test = inputs.test if inputs.external is not None else found[len(rows.validation) : held]
    cleaning.report.dropped = [
        Dropped(rule, pair.source, pair.target, was_kept)
        for (rule, _, was_kept), pair in zip(drops, found[held:], strict=True)
    ]
    return validation, test


def _pairs_of(table: Any) -> list[Pair]:
    """The pairs of a table of the corpus's columns, in its order."""
    meta = [name for name in table.column_names if name not in TEXT_COLUMNS]
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    return [
        Pair(s, t, {name: columns[name][i] for name in meta})
        for i, (s, t) in enumerate(zip(columns["source"], columns["target"], strict=True))
    ]


def _pair_record(pair: Pair) -> list[Any]:
    return [pair.source, pair.target, pair.meta] if pair.meta else [pair.source, pair.target]


def _write_train(files: CorpusFiles, rows: Any, path: Path, emit: EventSink) -> None:
    """Step 4: the training split's rows, in its order, with their ids and lengths when
    tokenized (:func:`~.corpus_reads.write_in_order`), and a progress line now and then."""
    rate = Rate()

    def on_rows(done: int, total: int) -> None:
        if total >= 4 * BATCH_ROWS and rate.due(done, total):
            emit(DataProgress("writing", done, total, *rate.figures(done, total)))

    write_in_order(files, rows, path, on_rows)


def load_entry(folder: Path, keep: bool = False) -> SplitData:
    """The split data an entry holds, its training pairs memory-mapped (``keep``: an
    entry that is not cached, read whole now so the folder can go)."""
    held = json.loads((folder / HELD_OUT_FILE).read_text(encoding="utf-8"))
    cleaning = held["cleaning"]
    settings = held["settings"]
    settings_report = CleaningReport(
        settings=CleaningSettings(**{**settings, "rules": tuple(settings["rules"])}),
        pairs_in=cleaning["pairs_in"],
        counts=dict(cleaning["counts"]),
        dropped=read_dropped_pairs(folder),
        long_measured=cleaning["long_measured"],
    )
    path = folder / TRAIN_FILE
    table = read_table(path, in_memory=keep)
    if keep:
        shutil.rmtree(folder, ignore_errors=True)
    return SplitData(
        PairTable(table, held["fingerprint"], None if keep else path),
        [_pair(r) for r in held["validation"]],
        [_pair(r) for r in held["test"]],
        settings_report,
        held["origin"],
        held["validation_name"],
        held["test_name"],
        held["revision"],
        tuple(held["notes"]),
    )


def _pair(record: list[Any]) -> Pair:
    return Pair(record[0], record[1], record[2] if len(record) > 2 else {})
