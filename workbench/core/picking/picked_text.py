"""A run's pick against beam search in words: the run's lines, and the rows the report and
compare tabulate, each metric marked as :mod:`.verdict` says and ordered with the judges
first, the one that leads at the top. One wording for every front end.
"""

from __future__ import annotations

from workbench.core.records.picked_scores import PickedScores
from workbench.core.records.scores import MetricChange
from workbench.core.views.human_agreement import CITATION, agreement_text
from workbench.core.views.numbers import MISSING
from workbench.core.views.score_text import change_before_after, change_cells, metric_label
from workbench.core.views.verdict import Verdict, marked, verdict

#: The columns of a pick's table (the report's, compare's), after the metric.
PICKED_COLUMNS = ["Beam search", "Picked", "Change", "p", "Humans agree (lead judge only)"]


def picked_verdict(scores: PickedScores) -> Verdict:
    """The judges of the run's pick (:func:`~.verdict.verdict`)."""
    return verdict(scores.metric, [c.metric for c in scores.changes])


def ordered(scores: PickedScores) -> list[MetricChange]:
    """The changes with the judges first, in the verdict's order, then the rest as scored."""
    judges = picked_verdict(scores).judges
    first = [c for name in judges for c in scores.changes if c.metric == name]
    return first + [c for c in scores.changes if c.metric not in judges]


def label(change: MetricChange, picker: str) -> str:
    """The metric's label with its mark: ``chrF (used to pick)``, ``TER (lower is better)``."""
    return metric_label(change).replace(change.metric, marked(change.metric, picker), 1)


def how_picked(scores: PickedScores) -> str:
    """``picked by mbr:chrF among 4 sampled candidates a line (62% distinct)``."""
    source = {"sample": "sampled", "beam": "n-best", "both": "n-best and sampled"}
    drawn = source.get(scores.candidates_from, scores.candidates_from)
    return (
        f"picked by {scores.picked_by} among {scores.candidates} {drawn} candidates a line "
        f"({scores.distinct:.0%} distinct)"
    )


def lead_reading(scores: PickedScores) -> str | None:
    """``what humans would say (Kocmi et al. 2024), on BLEU, the lead judge: …``."""
    found = picked_verdict(scores)
    change = scores.change(found.lead)
    reading = agreement_text(found.lead, change.delta) if change else None
    if change is None or reading is None:
        return None
    return (
        f"what humans would say ({CITATION}), on {found.lead}, the lead judge: "
        f"{change.delta:+.2f}, {reading}"
    )


def picked_lines(scores: PickedScores) -> list[str]:
    """The run's lines: how the test set was picked, each metric beam → picked (the lead
    judge first), what the verdict lacks, and the Kocmi reading on the lead judge."""
    found = picked_verdict(scores)
    lines = [f"test, {how_picked(scores)}; beam search → picked:"]
    for change in ordered(scores):
        lead = " (lead judge)" if change.metric == found.lead else ""
        lines.append(
            f"  {label(change, scores.metric)}{lead} "
            f"{change_before_after(change, scores.n_bootstrap)}"
        )
    if found.note:
        lines.append(found.note)
    reading = lead_reading(scores)
    if reading:
        lines.append(reading)
    return lines


def picked_rows(scores: PickedScores) -> list[list[str]]:
    """One row a metric, the judges first (:data:`PICKED_COLUMNS`); the human agreement
    only on the lead judge's row, never on the picker's."""
    lead = picked_verdict(scores).lead
    rows = []
    for change in ordered(scores):
        cells = change_cells(change, scores.n_bootstrap)
        cells[0] = label(change, scores.metric) + (" (lead judge)" if change.metric == lead else "")
        if change.metric != lead:
            cells[-1] = MISSING
        rows.append(cells)
    return rows
