"""A set's scores as text: the one way every front end and document writes a before ->
after score, its interval and its p-value (headless lines, the TUI, the report, compare),
and where the gain comes from (scores by source length, the sentences that changed most)."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.core.records.scores import (
    ChangedSentence,
    LengthBucket,
    LengthUnit,
    MetricChange,
    SetScores,
    score_change,
)
from workbench.core.views.human_agreement import agreement_line, agreement_text
from workbench.core.views.numbers import MISSING, interval, number, signed


def format_p(p: float, n_bootstrap: int) -> str:
    """``p = 0.032``, or ``p < 0.001`` at the resolution of the test (its resample or
    shuffle count)."""
    # sacreBLEU's smallest p is 1 / (n + 1); the next is 2 / (n + 1). Halfway between
    # them survives the rounding of stored p-values (1/10001 is stored as 0.0001).
    floor = 1.5 / (n_bootstrap + 1)
    if p < floor:
        return f"p < {1 / n_bootstrap:.3g}"
    return f"p = {p:.3f}" if p >= 0.001 else f"p = {p:.1g}"


def delta_text(delta: float, ci: list[float]) -> str:
    """``+0.81, 95% CI +0.34…+1.33``: a change with its paired-bootstrap interval."""
    return f"{delta:+.2f}, 95% CI {interval(ci, signed=True)}"


def with_ci(score: float | None, ci: Sequence[float] | None) -> str:
    """``10.21 (8.66…11.80)``: a score with its 95% interval, or :data:`MISSING`."""
    if score is None or not ci:
        return MISSING
    return f"{score:.2f} ({interval(ci)})"


def test_p(change: MetricChange, n_bootstrap: int) -> str:
    """The p-value of a change as its test allows: the bootstrap's at its resolution
    (:func:`format_p`), the t-test's as computed (``p < 0.001`` below that)."""
    if change.test == "paired bootstrap":
        return format_p(change.p, n_bootstrap)
    return "p < 0.001" if change.p < 0.001 else f"p = {change.p:.3f}"


def change_before_after(change: MetricChange, n_bootstrap: int) -> str:
    """``0.15 → 0.96 (+0.81, 95% CI +0.34…+1.33, p = 0.003)``: the one way every front
    end and the report write a metric before → after."""
    test = "" if change.test == "paired bootstrap" else f"{change.test} "
    return (
        f"{change.before:.2f} → {change.after:.2f} "
        f"({delta_text(change.delta, change.delta_ci)}, {test}{test_p(change, n_bootstrap)})"
    )


def before_after(s: SetScores, metric: str) -> str:
    """:func:`change_before_after` of ``bleu`` or ``chrf``."""
    return change_before_after(s.change(metric), s.n_bootstrap)


def metric_label(change: MetricChange) -> str:
    """``TER (lower is better)``, ``COMET-22 (Unbabel/wmt22-comet-da)``,
    ``MetricX-24 (google/metricx-24-hybrid-large-v2p6; lower is better)``: a metric's name
    with what a reader must know to read it."""
    said = [change.model] if change.model else []
    said += ["lower is better"] if change.lower_is_better else []
    return f"{change.metric} ({'; '.join(said)})" if said else change.metric


def more_lines(s: SetScores) -> list[str]:
    """chrF++ and TER on one line, COMET and MetricX each on its own, each as
    :func:`change_before_after`."""
    texts = [(c, f"{metric_label(c)} {change_before_after(c, s.n_bootstrap)}") for c in s.more]
    sacrebleu = [text for c, text in texts if c.model is None]
    return ([" · ".join(sacrebleu)] if sacrebleu else []) + [
        text for c, text in texts if c.model is not None
    ]


def change_cells(change: MetricChange, n_bootstrap: int) -> list[str]:
    """One metric's row in a table of changes (the report's, compare's): its name, both
    sides with their intervals, the change, its p (with the test when not the bootstrap)
    and how often humans agree with a change that size."""
    test = "" if change.test == "paired bootstrap" else "t-test "
    return [
        metric_label(change),
        with_ci(change.before, change.before_ci),
        with_ci(change.after, change.after_ci),
        delta_text(change.delta, change.delta_ci),
        test + test_p(change, n_bootstrap),
        agreement_text(change.metric, change.delta) or MISSING,
    ]


def agreement_of(s: SetScores) -> str | None:
    """The line that reads each delta of the set as a human would
    (:func:`~workbench.core.views.human_agreement.agreement_line`)."""
    return agreement_line([(c.metric, c.delta) for c in s.changes])


def published_text(bleu: float, source: str, test_set: str) -> str:
    """``published 22.0 (Helsinki-NLP opus-2020-07-17, newstest2018)``: the model's
    authors' BLEU on the test set, written beside "before"."""
    return f"published {bleu:.1f} ({source}, {test_set})"


def headline(s: SetScores) -> str:
    """``test (newstest2018, 3,981): BLEU 0.02 → 11.40 (+11.38, 95% CI …, p < 0.001) ·
    chrF …``: the line users hand in."""
    return f"{s.label}: BLEU {before_after(s, 'bleu')} · chrF {before_after(s, 'chrf')}"


def interval_line(s: SetScores) -> str:
    """Each side's own 95% bootstrap interval, for the line under the headline."""
    return (
        f"95% CI before: BLEU {interval(s.bleu_before_ci)}, chrF {interval(s.chrf_before_ci)}; "
        f"after: BLEU {interval(s.bleu_after_ci)}, chrF {interval(s.chrf_after_ci)} "
        f"(sacreBLEU paired bootstrap, {s.n_bootstrap} resamples)"
    )


def change_text(before: float, after: float) -> str:
    """``3.10 → 5.20 (+2.10)``: a score without an interval, before and after."""
    return f"{before:.2f} → {after:.2f} ({signed(score_change(before, after))})"


def length_range(bucket: LengthBucket, with_unit: bool = False) -> str:
    """``1–10``, ``41+``; ``1–10 words`` ``with_unit``."""
    text = f"{bucket.low}–{bucket.high}" if bucket.high is not None else f"{bucket.low}+"
    return f"{text} {bucket.unit}" if with_unit else text


def length_header(unit: LengthUnit | None) -> str:
    """``Source length (words)``: the by-length table's first column."""
    return f"Source length ({unit})" if unit else "Source length"


#: The by-length table after its first column (:func:`length_header`).
BY_LENGTH_COLUMNS = ["Sentences", "BLEU before → after", "chrF before → after"]


def by_length_cells(bucket: LengthBucket, with_unit: bool = False) -> list[str]:
    """One bucket as the by-length table shows it (the report, compare)."""
    return [
        length_range(bucket, with_unit),
        number(bucket.sentences),
        change_text(bucket.bleu_before, bucket.bleu_after),
        change_text(bucket.chrf_before, bucket.chrf_after),
    ]


#: The most-changed sentences' table.
CHANGED_HEADER = ["Source", "Reference", "Before", "After", "chrF before", "chrF after", "Change"]


def changed_cells(sentence: ChangedSentence) -> list[str]:
    """One of the sentences that changed most, as :data:`CHANGED_HEADER` says."""
    return [
        sentence.source,
        sentence.reference,
        sentence.before,
        sentence.after,
        number(sentence.chrf_before),
        number(sentence.chrf_after),
        signed(sentence.change),
    ]
