"""A neural metric on a run's held-out sets, before and after: the one path COMET and
MetricX both take at the end of a run.

Scored once, after training has released its model and "after" has been decoded, so the
scorer is never in memory beside the model it judges; each metric is loaded in turn and
let go of before the next. Both sets and both sides go through one loaded scorer, each
distinct input scored once. Each set gets its segment scores, kept beside each sentence
in ``<set>_translations.jsonl`` (``comet_before``, ``metricx_after``, …), and a
:class:`~workbench.core.records.scores.MetricChange` with a bootstrap interval of each
side and of the change, and comet-compare's paired t-test (:mod:`.segment_statistics`):
the same statistics for every neural metric, whichever way it points. The test set's
scores, like its BLEU, are reported and never used to choose anything.

A scorer that fails here (a checkpoint that cannot be fetched, out of memory) costs the
run nothing else: a warning says so, and BLEU, the translations and the model are kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from workbench.core.data.pair_features import Rate
from workbench.core.evaluate.before_after import HeldOutSets
from workbench.core.evaluate.segment_statistics import segment_change
from workbench.core.events import EventSink, Note, Phase, Sample, ScoreProgress
from workbench.core.records.scores import MetricChange, SetScores
from workbench.errors import failure_text

#: The neural metrics a run scores its held-out sets with: each its SetScores field, its
#: Sample columns' prefix (``comet_before``) and its phase's name.
Metric = Literal["comet", "metricx"]


class ScoreProgressSink:
    """A scorer's ``progress(done, total)`` as :class:`ScoreProgress` events, one every
    two seconds and one at the end."""

    def __init__(self, metric: str, emit: EventSink) -> None:
        self.metric, self.emit, self.rate = metric, emit, Rate()

    def __call__(self, done: int, total: int) -> None:
        """Emit an event when one is due."""
        if self.rate.due(done, total):
            self.emit(ScoreProgress(self.metric, done, total, *self.rate.figures(done, total)))


class SystemsScorer(Protocol):
    """A loaded neural metric: each system's segment scores on the same sources and
    references (``CometScorer``, ``MetricXScorer``)."""

    def score_systems(
        self,
        sources: Sequence[str],
        systems: Sequence[Sequence[str]],
        references: Sequence[str] | None,
        progress: Callable[[int, int], None] | None,
    ) -> list[list[float]]:
        """One list of segment scores per system."""
        ...


@dataclass(frozen=True)
class SetScorer:
    """A neural metric as a run's held-out sets are scored with it."""

    field: Metric
    name: str  # "COMET", "MetricX": the metric in a phase's and a warning's words
    model: str  # as the user named it
    load: Callable[[], tuple[str, SystemsScorer]]  # the metric's name as the papers give it
    scale: Callable[[list[float]], list[float]]  # its segment scores as shown (COMET ×100)
    lower_is_better: bool = False


@dataclass(frozen=True)
class ScoresOfSet:
    """One set's scores by one metric: each sentence's before and after, and the change."""

    before: list[float]
    after: list[float]
    change: MetricChange


def score_sets(
    sets: HeldOutSets,
    before: dict[str, list[str]],
    after: dict[str, list[str]],
    scorer: SetScorer,
    emit: EventSink,
) -> dict[str, ScoresOfSet]:
    """Each held-out set's scores before and after, by ``scorer``'s model."""
    emit(Phase(scorer.field, f"loading {scorer.model}"))
    metric, loaded = scorer.load()
    out: dict[str, ScoresOfSet] = {}
    for split, pairs in sets.pairs.items():
        emit(Phase(scorer.field, f"scoring {len(pairs)} {split} sentences before and after"))
        scored = loaded.score_systems(
            [p.source for p in pairs],
            [before[split], after[split]],
            sets.references(split),
            ScoreProgressSink(metric, emit),
        )
        b, a = scorer.scale(scored[0]), scorer.scale(scored[1])
        change = segment_change(b, a, metric, scorer.model)
        change = dataclasses.replace(change, lower_is_better=scorer.lower_is_better)
        out[split] = ScoresOfSet(b, a, change)
    return out


def add_scores(
    sets: HeldOutSets,
    before: dict[str, list[str]],
    after: dict[str, list[str]],
    scores: dict[str, SetScores],
    rows: dict[str, list[Sample]],
    scorer: SetScorer,
    emit: EventSink,
) -> tuple[dict[str, SetScores], dict[str, list[Sample]]]:
    """Each set's scores and sentences with ``scorer``'s metric added; as they were, with
    a warning that says why, when it fails."""
    try:
        found = score_sets(sets, before, after, scorer, emit)
    except Exception as err:  # any failure here (out of memory too) must not cost the run
        emit(
            Note(
                f"{scorer.name} was not scored: {failure_text(err)}. BLEU, chrF and the "
                "translations are kept; score them later with workbench score",
                "warning",
            )
        )
        return scores, rows
    return (
        {split: _with_change(s, scorer.field, found[split].change) for split, s in scores.items()},
        {split: _with_scores(r, scorer.field, found[split]) for split, r in rows.items()},
    )


def _with_change(scores: SetScores, field: Metric, change: MetricChange) -> SetScores:
    if field == "comet":
        return dataclasses.replace(scores, comet=change)
    return dataclasses.replace(scores, metricx=change)


def _with_scores(rows: list[Sample], field: Metric, found: ScoresOfSet) -> list[Sample]:
    pairs = zip(rows, found.before, found.after, strict=True)
    if field == "comet":
        return [dataclasses.replace(row, comet_before=b, comet_after=a) for row, b, a in pairs]
    return [dataclasses.replace(row, metricx_before=b, metricx_after=a) for row, b, a in pairs]
