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
with bootstrap intervals and comet-compare's paired t-test, by the path every neural
metric of a run takes (:mod:`.set_scorers`). The memory plan's line for the scorer comes
first, before training (:func:`workbench.core.comet.plan.scorer_memory`).
"""

from __future__ import annotations

from collections.abc import Callable

from workbench.core.comet.scorer import points
from workbench.core.evaluate.before_after import HeldOutSets
from workbench.core.evaluate.segment_statistics import mean
from workbench.core.evaluate.set_scorers import SetScorer, SystemsScorer, add_scores
from workbench.core.events import EventSink, Sample
from workbench.core.records.scores import SetScores


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
    """Each set's scores and sentences with COMET (×100) added by ``model``; a COMET model
    that fails now costs the run nothing else (:func:`~.set_scorers.add_scores`)."""

    def load() -> tuple[str, SystemsScorer]:
        from workbench.core.comet.scorer import load_scorer

        scorer = load_scorer(model, device=device)
        return scorer.metric, scorer

    comet = SetScorer("comet", "COMET", model, load, points)
    return add_scores(sets, before, after, scores, rows, comet, emit)


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
