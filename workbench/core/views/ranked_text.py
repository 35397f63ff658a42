"""A run trained on candidates a metric ranked (``train --objective best|cpo|dpo``), in
words: its sets before → after with the judges first, as :mod:`.verdict` orders a pick's.

The ranker chose what the model was trained on, so it overrates the tuned model as a
picker overrates its pick: it is marked ``(used to rank)`` (its relatives ``(of the
ranker's family)``) wherever it is shown, and never leads. The line users hand in starts
with the lead judge (a neural metric of another family, else the surface metric that did
not rank), then BLEU and chrF; the Kocmi et al. (2024) reading is given on the lead alone.
One wording for the run's lines, the report and the TUI.
"""

from __future__ import annotations

from workbench.core.records.objective_record import ObjectiveRecord
from workbench.core.records.scores import MetricChange, SetScores
from workbench.core.views.judged_changes import (
    judged_verdict,
    lead_reading,
    marked_label,
)
from workbench.core.views.score_text import change_before_after
from workbench.core.views.verdict import Verdict

#: The word :mod:`.verdict` marks the metric that ranked with.
ROLE = "rank"
#: What each objective past the references trains on (``--objective``'s values but sft).
TRAINS_ON = {
    "best": "the top-ranked candidate of each source as its target",
    "cpo": "preference pairs, the best and the worst of reference and candidates, by "
    "CPO's loss (the preference plus NLL on the preferred)",
    "dpo": "preference pairs, the best and the worst of reference and candidates, by "
    "DPO's loss against a frozen copy of the starting model",
}


def objective_brief(objective: str | None, ranker: str | None) -> str:
    """``cpo · chrF``: a run's objective and the metric that ranked for it, as ``runs``
    and compare tabulate it; ``sft`` for a run trained on the references."""
    if objective in (None, "sft"):
        return "sft"
    return f"{objective} · {ranker}" if ranker else str(objective)


def ranked_verdict(scores: SetScores, ranker: str) -> Verdict:
    """The judges of a set scored after training on candidates ``ranker`` ranked."""
    return judged_verdict(scores.changes, ranker, ROLE)


def _text(change: MetricChange, scores: SetScores, ranker: str) -> str:
    return f"{marked_label(change, ranker, ROLE)} {change_before_after(change, scores.n_bootstrap)}"


def ranked_headline(scores: SetScores, ranker: str) -> str:
    """``test (…): BLEU 13.60 → 14.02 (…) · chrF (used to rank) 13.67 → 14.80 (…)``: the
    lead judge, then BLEU and chrF (the ranker marked), never the ranker first."""
    found = ranked_verdict(scores, ranker)
    names = [*found.judges, *(m for m in ("BLEU", "chrF") if m not in found.judges)]
    shown = [c for name in names for c in scores.changes if c.metric == name]
    return f"{scores.label}: " + " · ".join(_text(c, scores, ranker) for c in shown)


def ranked_more(scores: SetScores, ranker: str) -> list[str]:
    """The set's other metrics, marked (one a line), what the verdict lacks, and the
    Kocmi reading on the lead judge."""
    found = ranked_verdict(scores, ranker)
    shown = {*found.judges, "BLEU", "chrF"}
    rest = [c for c in scores.changes if c.metric not in shown]
    lines = [_text(c, scores, ranker) for c in rest]
    if found.note:
        lines.append(found.note)
    reading = lead_reading(scores.changes, found)
    if reading:
        lines.append(reading)
    return lines


def kept_share(test: MetricChange, ceiling: MetricChange) -> float | None:
    """How much of the decoding-time gain (``ceiling``: the starting model's pick against
    its beam search) the tuned model kept with beam search alone (``test``: before →
    after); None where picking gained nothing on that metric."""
    sign = -1.0 if ceiling.lower_is_better else 1.0
    gain = sign * ceiling.delta
    if gain <= 0:
        return None
    return sign * test.delta / gain


def ceiling_lines(record: ObjectiveRecord, test: SetScores) -> list[str]:
    """The ceiling in words, on the lead judge: what the starting model gains by picking
    at decoding time, and how much of it the tuned model kept with beam search."""
    ceiling = record.ceiling
    if ceiling is None or record.ranker is None:
        return []
    lead = ranked_verdict(test, record.ranker).lead
    picked = ceiling.change(lead)
    tuned = next((c for c in test.changes if c.metric == lead), None)
    if picked is None or tuned is None:
        return []
    lines = [
        f"ceiling: the starting model picking by {ceiling.picked_by} among "
        f"{ceiling.candidates} candidates a line, beam search → picked: {lead} "
        f"{change_before_after(picked, ceiling.n_bootstrap)}"
    ]
    share = kept_share(tuned, picked)
    lines.append(
        f"the tuned model kept {share:.0%} of that gain with beam search alone ({lead})"
        if share is not None
        else f"picking gained nothing on {lead} here, so there is no gain to keep"
    )
    return lines
