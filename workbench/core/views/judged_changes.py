"""A set of metric changes judged by :mod:`.verdict`'s rule, as lines and table rows: the
judges first (the lead at the top), every metric marked by how it stands to the metric that
chose (``used to pick``, ``used to rank``, ``of the picker's family``), and the Kocmi et
al. (2024) reading on the lead judge alone.

A pick against beam search (``--pick``) and a run trained on ranked candidates
(``--objective``) are judged the same way: the metric that chose overrates what it chose.
Both are written here once, so the run's lines, the report and compare cannot word or
order them two ways.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.core.records.scores import MetricChange
from workbench.core.views.human_agreement import CITATION, agreement_text
from workbench.core.views.numbers import MISSING
from workbench.core.views.score_text import change_cells, metric_label
from workbench.core.views.verdict import Verdict, marked, verdict

#: The last column of a judged table: the Kocmi reading, given on one row only.
LEAD_ONLY = "Humans agree (lead judge only)"


def judged_verdict(changes: Sequence[MetricChange], chooser: str, role: str) -> Verdict:
    """The judges of ``changes`` when ``chooser`` picked (``role`` ``pick``) or ranked
    (``rank``) what the "after" side is."""
    return verdict(chooser, [c.metric for c in changes], role=role)


def marked_label(change: MetricChange, chooser: str, role: str) -> str:
    """The metric's label with its mark: ``chrF (used to rank)``, ``TER (lower is better)``."""
    return metric_label(change).replace(change.metric, marked(change.metric, chooser, role), 1)


def judges_first(changes: Sequence[MetricChange], found: Verdict) -> list[MetricChange]:
    """The changes with the judges first, in the verdict's order, then the rest as scored."""
    first = [c for name in found.judges for c in changes if c.metric == name]
    return first + [c for c in changes if c.metric not in found.judges]


def lead_reading(changes: Sequence[MetricChange], found: Verdict) -> str | None:
    """``what humans would say (Kocmi et al. 2024), on BLEU, the lead judge: …``; None where
    the lead was not scored or has no curve."""
    change = next((c for c in changes if c.metric == found.lead), None)
    reading = agreement_text(found.lead, change.delta) if change else None
    if change is None or reading is None:
        return None
    return (
        f"what humans would say ({CITATION}), on {found.lead}, the lead judge: "
        f"{change.delta:+.2f}, {reading}"
    )


def judged_rows(
    changes: Sequence[MetricChange], n_bootstrap: int, chooser: str, role: str
) -> list[list[str]]:
    """One row a metric, the judges first: its marked label (the lead's says so), both
    sides, the change, p, and the human agreement only on the lead judge's row."""
    found = judged_verdict(changes, chooser, role)
    rows = []
    for change in judges_first(changes, found):
        cells = change_cells(change, n_bootstrap)
        cells[0] = marked_label(change, chooser, role)
        if change.metric == found.lead:
            cells[0] += " (lead judge)"
        else:
            cells[-1] = MISSING
        rows.append(cells)
    return rows
