"""A run's test set picked among candidates (``train --pick``), against beam search: the
record ``summary.json`` keeps (:class:`PickedScores`) and one line of
``test_picked_translations.jsonl`` (:class:`PickedSample`).

Beam search's "after" is the run's "after" as ever; the picked one is a second decoding
of the same best model, scored against it. Each metric's change is a
:class:`~workbench.core.records.scores.MetricChange` whose *before* side is beam search
and whose *after* side is the pick, with the same intervals and paired tests as before
against after. Which metric may judge the pick is not stored: it follows from the metric
that picked, by the one rule of :mod:`workbench.core.views.verdict`.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.records.scores import MetricChange


@dataclass(frozen=True)
class PickedScores:
    """The test set's pick against its beam search, metric by metric."""

    picked_by: str  # "mbr:chrF", "mbr-pruned:COMET-22", "qe:CometKiwi-22"
    metric: str  # the metric that picked, as every table marks it "(used to pick)"
    candidates: int  # per line, as drawn
    candidates_from: str  # "sample", "beam" or "both"
    #: Every metric's change, beam search as "before" and the pick as "after": BLEU, chrF,
    #: chrF++, TER (sacreBLEU's paired bootstrap), then the run's neural metrics.
    changes: list[MetricChange]
    n_bootstrap: int
    size: int  # test sentences
    distinct: float  # the mean share of distinct candidates per line

    def change(self, metric: str) -> MetricChange | None:
        """The change of the metric named ``metric``, if it was scored."""
        return next((c for c in self.changes if c.metric == metric), None)


@dataclass(frozen=True)
class PickedSample:
    """One test sentence's beam translation and picked one, with their sentence scores."""

    source: str
    reference: str
    beam: str
    picked: str
    score: float | None  # what the pick ranked by (an MBR expected utility, a QE score)
    distinct: int  # distinct candidates the pick chose among
    bleu_beam: float
    bleu_picked: float
    chrf_beam: float
    chrf_picked: float
