"""COMET on a run's held-out sets, before and after: the field's metric beside BLEU.

Scored once, at the end, after training has released its model (``release_model``) and
"after" has been decoded, so the scorer (2.2 GB for COMET-22) is not in memory beside the
model it judges. Both sets and both sides go through one scorer in one pass: the sources
and references of "before" and "after" are encoded once. The test set's COMET, like its
BLEU, is reported and never used; the best epoch was chosen before this runs, on
validation BLEU, or on validation COMET with ``--select-on comet`` (:func:`epoch_comet`,
the one case where the scorer is loaded beside the training model, for each evaluation).

Each set gets its segment scores (×100, as the papers print COMET), kept beside each
sentence in ``<set>_translations.jsonl``, and a :class:`~workbench.core.records.scores.MetricChange`
with bootstrap intervals and comet-compare's paired t-test
(:mod:`.segment_statistics`). The memory plan's line for the scorer comes first, before
training (:func:`workbench.core.comet.plan.scorer_memory`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from workbench.core.comet.scorer import points
from workbench.core.data.pair_features import Rate
from workbench.core.evaluate.before_after import HeldOutSets
from workbench.core.evaluate.segment_statistics import mean, segment_change
from workbench.core.events import EventSink, Note, Phase, Sample, ScoreProgress
from workbench.core.records.scores import MetricChange, SetScores
from workbench.errors import failure_text


@dataclass(frozen=True)
class CometOfSet:
    """One set's COMET: each sentence's score before and after (×100), and the change."""

    before: list[float]
    after: list[float]
    change: MetricChange


class ScoreProgressSink:
    """A scorer's ``progress(done, total)`` as :class:`ScoreProgress` events, one every
    two seconds and one at the end."""

    def __init__(self, metric: str, emit: EventSink) -> None:
        self.metric, self.emit, self.rate = metric, emit, Rate()

    def __call__(self, done: int, total: int) -> None:
        """Emit an event when one is due."""
        if self.rate.due(done, total):
            self.emit(ScoreProgress(self.metric, done, total, *self.rate.figures(done, total)))


def comet_on_sets(
    sets: HeldOutSets,
    before: dict[str, list[str]],
    after: dict[str, list[str]],
    model: str,
    device: str,
    emit: EventSink,
) -> dict[str, CometOfSet]:
    """Each held-out set's COMET before and after, by ``model`` (a Hub id or a folder)."""
    from workbench.core.comet.scorer import load_scorer

    emit(Phase("comet", f"loading {model}"))
    scorer = load_scorer(model, device=device)
    metric = scorer.metric
    out: dict[str, CometOfSet] = {}
    for split, pairs in sets.pairs.items():
        emit(Phase("comet", f"scoring {len(pairs)} {split} sentences before and after"))
        sources = [p.source for p in pairs]
        scored = scorer.score_systems(
            sources,
            [before[split], after[split]],
            sets.references(split),
            ScoreProgressSink(metric, emit),
        )
        b, a = points(scored[0]), points(scored[1])
        out[split] = CometOfSet(b, a, segment_change(b, a, metric, model))
    return out


def with_comet(scores: SetScores, comet: CometOfSet) -> SetScores:
    """``scores`` with the set's COMET beside its BLEU."""
    return dataclasses.replace(scores, comet=comet.change)


def rows_with_comet(rows: list[Sample], comet: CometOfSet) -> list[Sample]:
    """A set's sentences with their COMET before and after."""
    return [
        dataclasses.replace(row, comet_before=b, comet_after=a)
        for row, b, a in zip(rows, comet.before, comet.after, strict=True)
    ]


def add_comet(
    sets: HeldOutSets,
    before: dict[str, list[str]],
    after: dict[str, list[str]],
    scores: dict[str, SetScores],
    rows: dict[str, list[Sample]],
    model: str,
    device: str,
    emit: EventSink,
) -> tuple[dict[str, SetScores], dict[str, list[Sample]]]:
    """Each set's scores and sentences with COMET added. A COMET model that fails to load
    now (its checkpoint could not be fetched, say) costs the run nothing else: a warning
    says so, and BLEU, the translations and the model are kept as they are."""
    try:
        comet = comet_on_sets(sets, before, after, model, device, emit)
    except Exception as err:  # any failure here (out of memory too) must not cost the run
        emit(
            Note(
                f"COMET was not scored: {failure_text(err)}. BLEU, chrF and the translations "
                "are kept; "
                "score them later with workbench score",
                "warning",
            )
        )
        return scores, rows
    return (
        {split: with_comet(s, comet[split]) for split, s in scores.items()},
        {split: rows_with_comet(r, comet[split]) for split, r in rows.items()},
    )


def epoch_comet(
    model: str, sources: list[str], references: list[str], device: str
) -> Callable[[list[str]], float]:
    """The validation set's COMET (×100) of one epoch's outputs, for ``--select-on
    comet``: the scorer is loaded for each evaluation and let go of at once, so between
    evaluations training runs without it (the memory plan counts it beside the training
    model, which it is while it scores)."""

    def score(hypotheses: list[str]) -> float:
        import gc

        from workbench.core.comet.scorer import load_scorer

        scorer = load_scorer(model, device=device)
        segments = scorer.score(sources, hypotheses, references)
        del scorer
        gc.collect()
        return mean(points(segments))

    return score
