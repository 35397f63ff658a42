"""A set's scores as text: the one way every front end and document writes a before ->
after score, its interval and its p-value (headless lines, the TUI, the report, compare),
and where the gain comes from (scores by source length, the sentences that changed most)."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.core.records.scores import (
    ChangedSentence,
    LengthBucket,
    LengthUnit,
    SetScores,
    score_change,
)
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


def before_after(s: SetScores, metric: str) -> str:
    """``0.15 → 0.96 (+0.81, 95% CI +0.34…+1.33, p = 0.003)`` for ``bleu`` or ``chrf``:
    the one way every front end and the report write a before → after score."""
    return (
        f"{getattr(s, f'{metric}_before'):.2f} → {getattr(s, f'{metric}_after'):.2f} "
        f"({delta_text(getattr(s, f'{metric}_delta'), getattr(s, f'{metric}_delta_ci'))}, "
        f"{format_p(getattr(s, f'{metric}_p'), s.n_bootstrap)})"
    )


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
