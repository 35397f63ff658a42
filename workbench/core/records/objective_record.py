"""What a run trained towards past the references (``train --objective best|cpo|dpo``):
the ``objective`` block of ``summary.json``, which ``runs``, report and compare show."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.records.picked_scores import PickedScores


@dataclass(frozen=True)
class ObjectiveRecord:
    """The objective, the metric that ranked its candidates, the data it made, and the
    ceiling: the starting model picking by that metric on the test set, against its
    own beam search."""

    objective: str  # "best", "cpo" or "dpo"
    rank_by: str  # the flag's value: "chrf", "qe"
    ranker: str | None = None  # the metric as tables name it: "chrF", "CometKiwi-22"
    candidates: int | None = None  # drawn for each training source
    candidates_from: str | None = None  # "sample", "beam" or "both"
    sources: int | None = None  # training sources ranked
    pairs: int | None = None  # what it trained on: preference pairs, or best targets
    skipped: int | None = None  # sources with no preference to learn
    beta: float | None = None  # CPO's and DPO's
    nll_weight: float | None = None  # CPO's
    #: The starting model's test set picked by the ranker's pick, against its beam search.
    ceiling: PickedScores | None = None
