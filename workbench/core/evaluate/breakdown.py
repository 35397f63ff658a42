"""Where the gain comes from: the test set's scores by source length, and the sentences
whose sentence chrF changed most.

One corpus score says whether fine-tuning helped, not where. As MT-Telescope (Unbabel)
does, a run breaks its test set down two ways: corpus BLEU and chrF before and after per
source-length bucket (a model that gained on short sentences and lost on long ones shows
both here and neither in the headline), and the sentences whose sentence chrF rose and
fell most (chrF ranks them: it is steadier than sentence BLEU on short sentences). Both
come from the rows :func:`~workbench.core.evaluate.before_after.score_rows` scored, with
the headline's metric code and BLEU tokenizer, so a bucket that held every sentence would
have the headline's numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.core.evaluate.metrics import corpus_bleu, corpus_chrf
from workbench.core.events import Sample
from workbench.core.languages import length_unit, length_units
from workbench.core.records.scores import (
    ChangedSentence,
    LengthBucket,
    LengthUnit,
    MostChanged,
    score_change,
)

#: The upper bound of each source-length bucket but the last, which has none: 1-10,
#: 11-20, 21-40 and 41+ words. A Chinese sentence holds about twice as many characters as
#: its English has words (8.6 against 5.2 in the HSK corpus), so the character edges are
#: the word edges doubled.
LENGTH_EDGES: dict[LengthUnit, tuple[int, ...]] = {
    "words": (10, 20, 40),
    "characters": (20, 40, 80),
}
#: Sentences shown each way (rose most, fell most).
N_MOST_CHANGED = 5


def by_length(rows: Sequence[Sample], tokenize: str, unit: LengthUnit) -> list[LengthBucket]:
    """Corpus BLEU and chrF before and after per source-length bucket, empty buckets left
    out (an empty source counts in the first)."""
    edges = LENGTH_EDGES[unit]
    bounds: list[tuple[int, int | None]] = list(
        zip((1, *(edge + 1 for edge in edges)), (*edges, None), strict=True)
    )
    groups: list[list[Sample]] = [[] for _ in bounds]
    for row in rows:
        length = len(length_units(row.source, unit))
        groups[next((n for n, edge in enumerate(edges) if length <= edge), len(edges))].append(row)
    buckets = []
    for (low, high), group in zip(bounds, groups, strict=True):
        if not group:
            continue
        references = [row.reference for row in group]
        before = [row.before for row in group]
        after = [row.after for row in group]
        buckets.append(
            LengthBucket(
                unit=unit,
                low=low,
                high=high,
                sentences=len(group),
                bleu_before=round(corpus_bleu(before, references, tokenize), 2),
                bleu_after=round(corpus_bleu(after, references, tokenize), 2),
                chrf_before=round(corpus_chrf(before, references), 2),
                chrf_after=round(corpus_chrf(after, references), 2),
            )
        )
    return buckets


def most_changed(
    rows: Sequence[Sample], k: int = N_MOST_CHANGED
) -> tuple[list[ChangedSentence], list[ChangedSentence]]:
    """The k sentences whose sentence chrF rose most, largest rise first, and the k whose
    chrF fell most, largest fall first (unchanged ones are neither; ties keep test order)."""
    changed = [
        ChangedSentence(
            source=row.source,
            reference=row.reference,
            before=row.before,
            after=row.after,
            chrf_before=before,
            chrf_after=after,
            change=score_change(before, after),
        )
        for row in rows
        if (before := row.chrf_before) is not None and (after := row.chrf_after) is not None
    ]
    rose = sorted((c for c in changed if c.change > 0), key=lambda c: -c.change)
    fell = sorted((c for c in changed if c.change < 0), key=lambda c: c.change)
    return rose[:k], fell[:k]


def gain_breakdown(
    rows: Sequence[Sample], tokenize: str, source_lang: str | None, k: int = N_MOST_CHANGED
) -> dict[str, Any]:
    """The summary's ``by_length`` and ``most_changed`` fields, from the test set's rows."""
    rose, fell = most_changed(rows, k)
    return {
        "by_length": by_length(rows, tokenize, length_unit(source_lang)),
        "most_changed": MostChanged(rose=rose, fell=fell),
    }
