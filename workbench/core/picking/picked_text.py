"""A run's pick against beam search in words: the run's lines, and the rows the report and
compare tabulate, each metric marked as :mod:`~workbench.core.views.verdict` says and
ordered with the judges first, the one that leads at the top
(:mod:`~workbench.core.views.judged_changes`). One wording for every front end.
"""

from __future__ import annotations

from workbench.core.records.picked_scores import PickedScores
from workbench.core.views.judged_changes import (
    LEAD_ONLY,
    judged_rows,
    judged_verdict,
    judges_first,
    lead_reading,
    marked_label,
)
from workbench.core.views.score_text import change_before_after
from workbench.core.views.verdict import Verdict

#: The columns of a pick's table (the report's, compare's), after the metric.
PICKED_COLUMNS = ["Beam search", "Picked", "Change", "p", LEAD_ONLY]
#: How a pick's candidates were drawn, in words (``--candidates-from``'s values).
DRAWN = {"sample": "sampled", "beam": "n-best", "both": "n-best and sampled"}


def drawn(candidates_from: str) -> str:
    """``sampled``, ``n-best``, ``n-best and sampled``: how the candidates were drawn."""
    return DRAWN.get(candidates_from, candidates_from)


def picked_verdict(scores: PickedScores) -> Verdict:
    """The judges of the run's pick (:func:`~workbench.core.views.verdict.verdict`)."""
    return judged_verdict(scores.changes, scores.metric, "pick")


def how_picked(scores: PickedScores) -> str:
    """``picked by mbr:chrF among 4 sampled candidates a line (62% distinct)``."""
    return (
        f"picked by {scores.picked_by} among {scores.candidates} "
        f"{drawn(scores.candidates_from)} candidates a line ({scores.distinct:.0%} distinct)"
    )


def picked_reading(scores: PickedScores) -> str | None:
    """``what humans would say (Kocmi et al. 2024), on BLEU, the lead judge: …``."""
    return lead_reading(scores.changes, picked_verdict(scores))


def picked_lines(scores: PickedScores) -> list[str]:
    """The run's lines: how the test set was picked, each metric beam → picked (the lead
    judge first), what the verdict lacks, and the Kocmi reading on the lead judge."""
    found = picked_verdict(scores)
    lines = [f"test, {how_picked(scores)}; beam search → picked:"]
    for change in judges_first(scores.changes, found):
        lead = " (lead judge)" if change.metric == found.lead else ""
        lines.append(
            f"  {marked_label(change, scores.metric, 'pick')}{lead} "
            f"{change_before_after(change, scores.n_bootstrap)}"
        )
    if found.note:
        lines.append(found.note)
    reading = picked_reading(scores)
    if reading:
        lines.append(reading)
    return lines


def picked_rows(scores: PickedScores) -> list[list[str]]:
    """One row a metric, the judges first (:data:`PICKED_COLUMNS`); the human agreement
    only on the lead judge's row, never on the picker's."""
    return judged_rows(scores.changes, scores.n_bootstrap, scores.metric, "pick")
