"""The one call a run makes for its preference data: the training sources ranked (or
their ranked lines reused from the cache), the choice of its objective made from them,
counted, with progress after each chunk and a stop checked between chunks.

A stop returns a :class:`PreferenceSet` that says so, with no records: the chunks ranked
so far stay in the cache, and the next call with the same inputs goes on from them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from workbench.core.cache_use import using
from workbench.core.data.pair_features import Rate
from workbench.core.decoding import DecodeOptions
from workbench.core.events import EventSink, Note, PreferenceProgress
from workbench.core.picking.metrics import PickingMetric
from workbench.core.preferences.cache import (
    PreferenceEntry,
    key_parts,
    model_identity,
    preference_key,
    preferences_root,
)
from workbench.core.preferences.ranking import TrainingPair, check_ranker, rank_sources
from workbench.core.preferences.records import (
    PreferenceRecord,
    RankedSource,
    check_objective,
    choose,
)
from workbench.core.translate.candidates import CandidateSettings
from workbench.core.translate.translator import Translator
from workbench.core.views.preference_text import PreferenceCounts, preferences_line

#: Sources ranked between two appends to the cache, two progress events and two looks
#: at the stop flag.
CHUNK = 16
#: Seconds between two looks at another process's lock on the same entry.
LOCK_POLL = 0.5


@dataclass(frozen=True)
class PreferenceSet:
    """A run's preference data: the records its objective trains on, and how they came."""

    records: tuple[PreferenceRecord, ...]
    counts: PreferenceCounts
    cache: Path  # the entry's folder

    @property
    def ranked(self) -> int:
        """Sources ranked (all of them, unless stopped)."""
        return self.counts.ranked

    @property
    def skipped(self) -> int:
        """Sources with nothing to learn for the objective (see :func:`.records.choose`)."""
        return self.counts.skipped

    @property
    def reused(self) -> bool:
        """Whether every ranked line came from the cache, sealed by an earlier build."""
        return self.counts.reused

    @property
    def stopped(self) -> bool:
        """Whether the stop flag ended the ranking part-way (then there are no records)."""
        return self.counts.stopped

    @property
    def summary(self) -> str:
        """The one line the run prints about its preference data."""
        return preferences_line(self.counts)


@dataclass(frozen=True)
class _Build:
    """What ranking the sources needs, besides the entry it fills."""

    translator: Translator
    pairs: Sequence[TrainingPair]
    settings: CandidateSettings
    ranker: PickingMetric
    base: DecodeOptions
    batch_size: int
    chunk: int


def preference_records(
    translator: Translator,
    pairs: Sequence[TrainingPair],
    objective: str,
    settings: CandidateSettings,
    ranker: PickingMetric,
    *,
    model: str,
    revision: str | None = None,
    ranker_model: str | None = None,
    base: DecodeOptions | None = None,
    batch_size: int = 32,
    chunk: int = CHUNK,
    emit: EventSink | None = None,
    stop: threading.Event | None = None,
) -> PreferenceSet:
    """``pairs`` ranked by ``ranker`` over their candidates from ``translator`` (loaded
    from ``model`` at ``revision``; ``ranker_model`` names the ranker's own model, None for
    chrF and BLEU), and ``objective``'s chosen and rejected of each (best, cpo, dpo).

    The ranked lines are read from the cache when a build with the same inputs sealed
    them, resumed from the chunks a stopped one left, else ranked now, ``chunk`` sources
    at a time, each chunk appended to the cache, followed by a
    :class:`~workbench.core.events.PreferenceProgress`, and ``stop`` looked at before the
    next. A ranker that needs references the pairs lack is refused first, in one line."""
    check_objective(objective)
    check_ranker(ranker, pairs)
    base = base or translator.default_options()
    parts = key_parts(
        model_identity(model, revision),
        translator,
        pairs,
        settings,
        base,
        (ranker.name, ranker_model),
        (batch_size, chunk),
    )
    entry = PreferenceEntry(preferences_root(), preference_key(parts))
    build = _Build(translator, pairs, settings, ranker, base, batch_size, chunk)
    with using(entry.folder):
        lines = entry.sealed()
        reused = lines is not None
        stopped = False
        if lines is None:
            lines, reused, stopped = _locked_build(entry, build, emit, stop)
    chosen = (
        []
        if stopped
        else [choose(line, objective, ranker.higher_is_better, ranker.name) for line in lines]
    )
    records = tuple(record for record in chosen if record is not None)
    counts = PreferenceCounts(
        objective,
        len(pairs),
        len(lines),
        settings.count,
        ranker.name,
        not ranker.reference_free,
        len(records),
        len(chosen) - len(records),
        str(entry.folder),
        reused,
        stopped,
    )
    return PreferenceSet(records, counts, entry.folder)


def _locked_build(
    entry: PreferenceEntry,
    build: _Build,
    emit: EventSink | None,
    stop: threading.Event | None,
) -> tuple[list[RankedSource], bool, bool]:
    """(lines, reused, stopped): the entry built under its lock, or read once the process
    that held the lock sealed it."""
    waited = False
    while True:
        with entry.building() as lock:
            if lock is not None:
                sealed = entry.sealed()  # sealed by the process this one waited for
                if sealed is not None:
                    return sealed, True, False
                lines, stopped = _rank_rest(entry, build, emit, stop)
                return lines, False, stopped
        if stop is not None and stop.is_set():
            return [], False, True
        if not waited and emit is not None:
            emit(
                Note(
                    f"preferences: another process is ranking the same sources into "
                    f"{entry.folder}; waiting for it"
                )
            )
        waited = True
        time.sleep(LOCK_POLL)


def _rank_rest(
    entry: PreferenceEntry,
    build: _Build,
    emit: EventSink | None,
    stop: threading.Event | None,
) -> tuple[list[RankedSource], bool]:
    """(lines, stopped): the chunks an earlier build left, then the rest ranked chunk by
    chunk; the entry sealed when every source is in."""
    pairs, total = build.pairs, len(build.pairs)
    lines = entry.kept(build.chunk)
    earlier = len(lines)
    if earlier and emit is not None:
        emit(
            Note(
                f"preferences: {earlier:,} of {total:,} sources ranked by an earlier "
                "build are kept; ranking the rest"
            )
        )
    clock = Rate()
    for start in range(earlier, total, build.chunk):
        if stop is not None and stop.is_set():
            return lines, True
        chunk = rank_sources(
            build.translator,
            pairs[start : start + build.chunk],
            build.settings,
            build.ranker,
            build.base,
            build.batch_size,
        )
        entry.append(chunk)
        lines += chunk
        if emit is not None:
            rate, eta = clock.figures(len(lines) - earlier, total - earlier)
            emit(PreferenceProgress("ranking", len(lines), total, rate, eta))
    entry.seal(len(lines))
    return lines, False
