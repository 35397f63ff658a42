"""Preparing a run's data at the scale of millions of pairs: read into Arrow, cleaned and
tokenized in parallel, split by row numbers, and cached for the next run.

The order is the one :mod:`.cleaning` and :mod:`.splits` describe (clean before the
split, the test set first, every rule counted); here the steps run over a corpus on disk:

1. the pairs are written to Arrow as they are read (:mod:`.arrow_pairs`);
2. every pair's rule verdict, keys and token ids are computed by ``num_proc`` processes
   (:mod:`.pair_features`);
3. the order-bound rules, the sample and the split run over row numbers and keys alone,
   held as numpy arrays (:class:`~.cleaning_pass.CleaningPass`, :func:`~.splits.split_rows`);
4. the training split is written with its ids and lengths, the held-out sets and what
   cleaning took out beside it, as one entry of the cache (:mod:`.prepared_cache`); the
   corpus is read for them in file order, never gathered from in shuffled order
   (:mod:`.corpus_reads` says why).

Those steps build an entry (:mod:`.prepared_entry`); this module decides which entry a
run gets: the key of its inputs, an entry found under it (or under the key a tokenizer-less
browser computes), or a new one built and published. A second run with the same inputs
opens that entry, memory-mapped, and says ``data: cached (...)``.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

from workbench.core.cache_use import using
from workbench.core.config.run_config import RunConfig
from workbench.core.data.cleaning import CleaningSettings, TokenCounter
from workbench.core.data.cleaning_pass import clean_pairs
from workbench.core.data.pair import Pair
from workbench.core.data.prepared_cache import (
    cache_key,
    content_digest,
    find_entry,
    new_build_folder,
    prepared_root,
    publish_entry,
    read_alias,
    write_alias,
)
from workbench.core.data.prepared_entry import EntryInputs, build_entry, load_entry
from workbench.core.data.sources import external_test_set, is_hub_dataset, read_source
from workbench.core.data.splits import SplitData
from workbench.core.data.tokenize import PairTokenizer
from workbench.core.events import EventSink, Note
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
    test = _outside_test_set(external, settings)
    tokenizer = count_tokens if isinstance(count_tokens, PairTokenizer) else None
    fingerprint = tokenizer.fingerprint() if tokenizer else None
    inputs = EntryInputs(
        config=config,
        source=source,
        test=test,
        external=external,
        settings=settings,
        tokenizer=tokenizer,
        fingerprint=fingerprint,
        count_tokens=count_tokens,
    )
    parts = _key_parts(inputs)
    # Without drop_long the tokenizer only counts: the pairs and the split are the same
    # with or without it, so a browser may show what a run prepared.
    browse_key = cache_key({**parts, "tokenizer": None}) if not settings.drop_long else None
    cacheable = count_tokens is None or tokenizer is not None
    root = prepared_root()
    if not cacheable:
        return _build(inputs, root, None, emit, num_proc)
    key = cache_key(parts)
    candidates = [key]
    if browse and tokenizer is None and browse_key is not None:
        candidates += [name for name in [read_alias(root, browse_key)] if name]
    found = _cached(root, candidates, emit)
    if found is not None:
        return found
    with using(root / key):  # held from the build until the run that uses it lives
        data = _build(inputs, root, key, emit, num_proc)
        if tokenizer is not None and browse_key is not None:
            write_alias(root, browse_key, key)
        return data


def _build(
    inputs: EntryInputs, root: Path, key: str | None, emit: EventSink, num_proc: int | None
) -> SplitData:
    """Prepare the data in a private folder, then publish it as the entry ``key`` and open
    it there (None: not cached, read whole and the folder dropped)."""
    building = new_build_folder(root)
    try:
        build_entry(inputs, building, emit, num_proc)
        if key is None:
            return load_entry(building, keep=True)
        return load_entry(publish_entry(building, root, key, {"origin": inputs.source.origin}))
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise


def _outside_test_set(
    external: tuple[list[Pair], str] | None, settings: CleaningSettings
) -> list[Pair]:
    """An outside test set's pairs, stripped of empty and repeated ones only: it is the
    set published scores are measured on ([] without one)."""
    if external is None:
        return []
    test_rules = tuple(r for r in ("empty", "duplicate") if r in settings.rules)
    stripped = [Pair(p.source.strip(), p.target.strip()) for p in external[0]]
    test, _ = clean_pairs(stripped, dataclasses.replace(settings, rules=test_rules))
    if not test:
        raise WorkbenchError(f"the test set {external[1]} has no usable pairs")
    return test


def _key_parts(inputs: EntryInputs) -> dict[str, Any]:
    """Everything that decides an entry's contents, for :func:`~.prepared_cache.cache_key`."""
    config, external = inputs.config, inputs.external
    return {
        "data": inputs.source.identity,
        "test": [external[1], content_digest(inputs.test)] if external else None,
        "settings": dataclasses.asdict(inputs.settings),
        "tokenizer": inputs.fingerprint,
        "split": [
            config.seed,
            config.samples,
            config.validation_fraction,
            config.test_fraction,
            is_hub_dataset(config),
        ],
    }


def _cached(root: Path, candidates: list[str], emit: EventSink) -> SplitData | None:
    """The first whole entry among ``candidates``, opened; a torn one is said and removed."""
    for name in candidates:
        with using(root / name):
            found, torn = find_entry(root, name)
            if torn:
                emit(
                    Note(f"data: the cached copy in {root / name} was incomplete; preparing again")
                )
            if found is not None:
                data = load_entry(found)
                emit(Note(f"data: cached ({len(data.train):,} training pairs in {found})"))
                return data
    return None
