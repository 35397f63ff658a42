"""Preparing a run's data at the scale of millions of pairs: read into Arrow, cleaned and
tokenized in parallel, split by row numbers, and cached for the next run.

The steps and their order are those :mod:`.pairs` describes (clean before the split, the
test set first, every rule counted); here they run over a corpus on disk:

1. the pairs are written to Arrow as they are read (:mod:`.arrow_pairs`);
2. every pair's rule verdict, keys and token ids are computed by ``num_proc`` processes
   (:mod:`.pair_features`);
3. the order-bound rules, the sample and the split run over row numbers and keys alone,
   held as numpy arrays (:class:`~.cleaning.CleaningPass`, :func:`~.splits.split_rows`);
4. the training split is written with its ids and lengths, the held-out sets and what
   cleaning took out beside it, as one entry of the cache (:mod:`.prepared_cache`); the
   corpus is read for them in file order, never gathered from in shuffled order
   (:mod:`.corpus_reads` says why).

A second run with the same inputs opens that entry, memory-mapped, and says
``data: cached (...)``.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
from pathlib import Path
from typing import Any

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
from workbench.core.data.cleaning_pass import CleaningPass, clean_pairs, test_keys_of
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
from workbench.core.data.prepared_cache import (
    HELD_OUT_FILE,
    TRAIN_FILE,
    cache_key,
    content_digest,
    find_entry,
    new_build_folder,
    prepared_root,
    publish_entry,
    read_alias,
    write_alias,
)
from workbench.core.data.sources import Source, external_test_set, is_hub_dataset, read_source
from workbench.core.data.splits import SplitData, split_rows
from workbench.core.data.tokenize import PairTokenizer
from workbench.core.events import DataProgress, EventSink, Note
from workbench.errors import WorkbenchError


def prepare_data(
    config: RunConfig,
    cache_dir: Path | None = None,
    on_event: EventSink | None = None,
    count_tokens: TokenCounter | None = None,
) -> SplitData:
    """Load and clean the pairs, hold out the test set, subsample, split the rest.

    Cleaning (:mod:`.cleaning`) runs before the split, so junk never lands in a held-out
    set; ``count_tokens`` (the model's tokenizer) lets it count the pairs past the maximum
    lengths. An outside test set (a Hub split or ``--test-data``) is only stripped of
    empty and repeated pairs: it is the set published scores are measured on. Pairs of
    the training data whose source or target is in the test set are dropped. The work
    happens over Arrow files, in parallel, and is cached (:func:`prepare_split`).
    """
    return prepare_split(config, cache_dir, on_event, count_tokens)


def prepare_split(
    config: RunConfig,
    cache_dir: Path | None = None,
    on_event: EventSink | None = None,
    count_tokens: TokenCounter | None = None,
    num_proc: int | None = None,
    browse: bool = False,
) -> SplitData:
    """The run's cleaned and split pairs, from the cache when it has them.

    ``count_tokens`` is the model's :class:`~.tokenize.PairTokenizer` (its ids are then
    prepared too, and its fingerprint is part of the key); another counter only measures
    the ``long`` rule, and such data is not cached. ``browse`` (the Dataset pane, with no
    tokenizer) also takes the entry a run prepared of the same pairs with its model's
    tokenizer, whose ``long`` counts that tokenizer measured; a run never does, so what
    it prints never depends on what ran before it.
    """
    emit = on_event or (lambda event: None)
    settings = CleaningSettings.of(config)
    source = read_source(config, cache_dir, on_event)
    external = external_test_set(config, source.revision, cache_dir)
    test: list[Pair] = []
    if external is not None:
        test_rules = tuple(r for r in ("empty", "duplicate") if r in settings.rules)
        stripped = [Pair(p.source.strip(), p.target.strip()) for p in external[0]]
        test, _ = clean_pairs(stripped, dataclasses.replace(settings, rules=test_rules))
        if not test:
            raise WorkbenchError(f"the test set {external[1]} has no usable pairs")
    tokenizer = count_tokens if isinstance(count_tokens, PairTokenizer) else None
    cacheable = count_tokens is None or tokenizer is not None
    root = prepared_root()
    key = None
    fingerprint = tokenizer.fingerprint() if tokenizer else None
    parts = {
        "data": source.identity,
        "test": [external[1], content_digest(test)] if external else None,
        "settings": dataclasses.asdict(settings),
        "tokenizer": fingerprint,
        "split": [
            config.seed,
            config.samples,
            config.validation_fraction,
            config.test_fraction,
            is_hub_dataset(config),
        ],
    }
    # Without drop_long the tokenizer only counts: the pairs and the split are the same
    # with or without it, so a browser may show what a run prepared.
    browse_key = cache_key({**parts, "tokenizer": None}) if not settings.drop_long else None
    if cacheable:
        key = cache_key(parts)
        candidates = [key]
        if browse and tokenizer is None and browse_key is not None:
            candidates += [name for name in [read_alias(root, browse_key)] if name]
        for name in candidates:
            found, torn = find_entry(root, name)
            if torn:
                emit(
                    Note(f"data: the cached copy in {root / name} was incomplete; preparing again")
                )
            if found is not None:
                data = load_entry(found)
                emit(Note(f"data: cached ({len(data.train):,} training pairs in {found})"))
                return data
    building = new_build_folder(root)
    try:
        _build(
            config,
            source,
            test,
            external,
            settings,
            tokenizer,
            fingerprint,
            count_tokens,
            building,
            emit,
            num_proc,
        )
        if key is None:
            return load_entry(building, keep=True)
        entry = publish_entry(building, root, key, {"origin": source.origin})
        if tokenizer is not None and browse_key is not None:
            write_alias(root, browse_key, key)
        return load_entry(entry)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise


def _build(
    config: RunConfig,
    source: Source,
    test: list[Pair],
    external: tuple[list[Pair], str] | None,
    settings: CleaningSettings,
    tokenizer: PairTokenizer | None,
    fingerprint: str | None,
    count_tokens: TokenCounter | None,
    folder: Path,
    emit: EventSink,
    num_proc: int | None,
) -> None:
    """Prepare the data into ``folder``: the steps of this module's docstring."""
    import numpy as np

    corpus = folder / "corpus.arrow"
    reading = Rate()
    laps = StageClock()

    def on_rows(done: int) -> None:
        if done >= 2 * BATCH_ROWS and reading.due(done, 0):  # a small corpus: no lines
            emit(DataProgress("reading", done, 0, reading.figures(done, 0)[0]))

    count = write_pairs(source.rows, corpus, on_rows)
    laps.lap("reading")
    stage = "cleaning and tokenizing" if tokenizer else "cleaning"
    working = Rate()

    def on_shard(done: int, total: int) -> None:
        if total >= 2 * BATCH_ROWS and working.due(done, total):
            emit(DataProgress(stage, done, total, *working.figures(done, total)))

    job = FeatureJob(corpus, folder, settings, tokenizer)
    procs = num_proc or config.num_proc or default_num_proc()
    features = compute_features(job, count, procs, on_shard)
    laps.lap(stage)
    plain = CorpusFiles(corpus)
    columns = {
        name: features.column(name).to_numpy()
        for name in ("rule", "source_key", "target_key", "pair_key")
    }
    report = CleaningReport(settings, pairs_in=count)
    cleaning = CleaningPass(report)
    lengths = None
    if tokenizer is not None:
        source_tokens = features.column("source_tokens").to_numpy()
        target_tokens = features.column("target_tokens").to_numpy()

        def lengths(rows: Any) -> tuple[Any, Any]:
            return source_tokens[rows], target_tokens[rows]

    elif count_tokens is not None:
        counter = count_tokens

        def lengths(rows: Any) -> tuple[Any, Any]:
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

    kept = cleaning.run(columns, lengths, test_keys_of(test))
    if not len(kept):
        raise WorkbenchError(
            f"no usable pairs in {source.origin} after cleaning ({' '.join(report.lines())}); "
            "check the file's columns and languages, or pass --no-clean"
        )
    notes: list[str] = []
    if config.samples and len(kept) > config.samples:
        # Positions drawn as sample() draws items, so the same pairs in the same order.
        kept = kept[random.Random(config.seed).sample(range(len(kept)), config.samples)]
    elif config.samples and is_hub_dataset(config) and len(kept) < config.samples:
        notes.append(
            f"{len(kept):,} pairs left after cleaning {report.pairs_in:,} drawn, fewer than "
            f"the {config.samples:,} asked for; pass a larger --samples to draw more"
        )
    held_out = f"{config.validation_fraction:.0%} held out, seed {config.seed}"
    # Row numbers, in each split's shuffled order: positions in kept, mapped to rows.
    shares = (config.validation_fraction, 0.0 if external is not None else config.test_fraction)
    train_rows, validation_rows, test_rows = (
        kept[at] for at in split_rows(len(kept), config.seed, *shares)
    )
    if external is not None:
        test_name = external[1]
    else:
        # A test share of the same data: its near-copies leave train and validation now.
        keys = (
            set(columns["source_key"][test_rows].tolist()) - {NO_KEY},
            set(columns["target_key"][test_rows].tolist()) - {NO_KEY},
        )
        train_rows = cleaning.overlap(train_rows, columns, keys)
        validation_rows = cleaning.overlap(validation_rows, columns, keys)
        test_name = f"{config.test_fraction:.0%} held out, seed {config.seed}"
    # The held-out and dropped pairs in one pass over the corpus.
    drop_rows = np.fromiter((row for _, row, _ in cleaning.drops), np.int64, len(cleaning.drops))
    wanted = np.concatenate([validation_rows, test_rows, drop_rows])
    found = _pairs_of(gather(plain, wanted))
    validation = found[: len(validation_rows)]
    if external is None:
        test = found[len(validation_rows) : len(validation_rows) + len(test_rows)]
    dropped = found[len(validation_rows) + len(test_rows) :]
    report.dropped = [
        Dropped(rule, pair.source, pair.target, was_kept)
        for (rule, _, was_kept), pair in zip(cleaning.drops, dropped, strict=True)
    ]
    write_dropped_pairs(folder, report)
    shards = tuple(job.shard_files(count)) if tokenizer else ()
    laps.lap("rules, sample, split and held-out sets")
    _write_train(CorpusFiles(corpus, shards), train_rows, folder / TRAIN_FILE, emit)
    laps.lap("writing")
    emit(Note(f"data: prepared {count:,} pairs in {laps.text()}"))
    held = {
        "validation": [_pair_record(p) for p in validation],
        "test": [_pair_record(p) for p in test],
        "origin": source.origin,
        "validation_name": held_out,
        "test_name": test_name,
        "revision": source.revision,
        "notes": notes,
        "cleaning": {
            "pairs_in": report.pairs_in,
            "counts": report.counts,
            "long_measured": report.long_measured,
        },
        "fingerprint": fingerprint,
        "settings": dataclasses.asdict(settings),
    }
    (folder / HELD_OUT_FILE).write_text(json.dumps(held, ensure_ascii=False), encoding="utf-8")
    corpus.unlink()
    for shard in folder.glob("features-*.arrow"):
        shard.unlink()


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
    """The training split's rows, in its order, with their ids and lengths when tokenized
    (:func:`~.corpus_reads.write_in_order`), and a progress line now and then."""
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
