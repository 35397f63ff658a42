"""Training sources ranked: each source's candidates generated as a pick generates them,
then scored by the ranker, with the source's reference scored beside them.

Candidates come from :func:`~workbench.core.translate.candidates.generate_candidates`, so
they are what ``translate --pick`` would draw for the same settings (seeded per line: a
line's samples do not depend on the lines around it). Scoring goes through the ranker's
one batch function, :attr:`~workbench.core.picking.metrics.PickingMetric.score`, over a
whole chunk of sources at once, a neural ranker's batches filled across sources. A
reference-based ranker (chrF, BLEU, COMET, MetricX) scores each candidate against the
pair's reference, and the reference against itself (chrF's 100: the reference is then
always the best of a cpo/dpo pool, as the ranker says); a reference-free one (CometKiwi,
MetricX-QE) scores every text against the source alone. The reference is scored for every
objective, so the ranked lines serve ``best``, ``cpo`` and ``dpo`` alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from workbench.core.decoding import DecodeOptions
from workbench.core.picking.metrics import PickingMetric
from workbench.core.picking.picks import Candidates
from workbench.core.preferences.records import RankedCandidate, RankedSource
from workbench.core.translate.candidates import CandidateSettings, generate_candidates
from workbench.core.translate.translator import Translator
from workbench.errors import WorkbenchError

#: Texts the ranker is given in one call: a neural ranker batches inside it.
SCORE_BATCH = 256


class TrainingPair(Protocol):
    """A training pair as ranking reads it (:class:`~workbench.core.data.pair.Pair`)."""

    @property
    def source(self) -> str:
        """The sentence the candidates translate."""

    @property
    def target(self) -> str:
        """Its reference; empty for a source alone."""


def reference_of(pair: TrainingPair) -> str | None:
    """The pair's reference, or None when it has none (an empty or blank target)."""
    return pair.target if pair.target.strip() else None


def check_ranker(ranker: PickingMetric, pairs: Sequence[TrainingPair]) -> None:
    """Refuse in one line a ranker that reads a reference when some pairs have none."""
    if ranker.reference_free:
        return
    missing = sum(reference_of(pair) is None for pair in pairs)
    if missing:
        raise WorkbenchError(
            f"--rank-by {ranker.name} scores each candidate against the reference, and "
            f"{missing:,} of the {len(pairs):,} training pairs have none; rank by a "
            "reference-free metric (--rank-by qe or metricx-qe) or train on pairs with "
            "references"
        )


def rank_sources(
    translator: Translator,
    pairs: Sequence[TrainingPair],
    settings: CandidateSettings,
    ranker: PickingMetric,
    base: DecodeOptions | None = None,
    batch_size: int = 32,
) -> list[RankedSource]:
    """Each pair's source with its reference and candidates, scored by ``ranker``, in the
    pairs' order (an empty source gets no candidate). A ranker that needs references the
    pairs lack is refused before anything is generated."""
    check_ranker(ranker, pairs)
    lines = [pair.source for pair in pairs]
    drawn = generate_candidates(translator, lines, settings, base, batch_size)
    return score_candidates(ranker, pairs, drawn)


def score_candidates(
    ranker: PickingMetric, pairs: Sequence[TrainingPair], drawn: Sequence[Candidates]
) -> list[RankedSource]:
    """Each pair's candidates (``drawn``, in the pairs' order) and reference scored by
    ``ranker``, every text of every pair in batches of :data:`SCORE_BATCH`."""
    rows: list[tuple[str, str, str | None]] = []  # (source, text, reference)
    for pair, candidates in zip(pairs, drawn, strict=True):
        reference = reference_of(pair)
        rows += [(pair.source, text, reference) for text in candidates.texts]
        if reference is not None:
            rows.append((pair.source, reference, reference))
    scores = score_rows(ranker, rows)
    ranked, at = [], 0
    for pair, candidates in zip(pairs, drawn, strict=True):
        reference = reference_of(pair)
        texts = candidates.texts
        scored = [
            RankedCandidate(text, scores[at + i], count)
            for i, (text, count) in enumerate(zip(texts, candidates.counts, strict=True))
        ]
        at += len(texts)
        reference_score = None
        if reference is not None:
            reference_score, at = scores[at], at + 1
        ranked.append(RankedSource(pair.source, reference, reference_score, scored))
    return ranked


def score_rows(ranker: PickingMetric, rows: Sequence[tuple[str, str, str | None]]) -> list[float]:
    """``ranker``'s score of each (source, text, reference) row, in batches; the
    references are given only to a ranker that reads them."""
    scores: list[float] = []
    for start in range(0, len(rows), SCORE_BATCH):
        batch = rows[start : start + SCORE_BATCH]
        sources = [row[0] for row in batch]
        texts = [row[1] for row in batch]
        references = None if ranker.reference_free else [str(row[2]) for row in batch]
        scores += [float(s) for s in ranker.score(sources, texts, references)]
    return scores
