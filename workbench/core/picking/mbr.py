"""Minimum Bayes risk: the candidate with the highest expected utility against the others.

Each candidate is scored as a hypothesis against every candidate as a pseudo-reference,
and its expected utility is the mean of those scores weighted by how often each
pseudo-reference was drawn: the same figure as the plain mean over the candidate list
with its duplicates kept (mbrs's ``DecoderMBR`` on that list gives it; the parity test is
``tests/unit/test_mbr_parity.py``), while each distinct pair is scored once.

Two ways, both over a utility that is a plain batch scoring function, so chrF, BLEU,
COMET and MetricX serve alike:

- :func:`full_mbr`: every distinct pair, k² scores for k distinct candidates.
- :func:`pruned_mbr`: confidence-based pruning (Cheng & Vlachos, EMNLP 2023; mbrs's
  ``DecoderPruningMBR``): the pseudo-references are taken in growing prefixes (8, 16,
  32, …) of a seeded shuffle of the drawn list; after each prefix, a bootstrap over it
  keeps only the candidates that beat the current best in more than 1 − α of the
  resamples, and only those are scored against the next prefix. The survivors end with
  their full expected utility, the same figure :func:`full_mbr` gives them; a pruned
  candidate has none (None).

Pruning rather than centroid MBR (Deguchi et al. 2024): centroid MBR clusters the
candidates' sentence embeddings, which only an embedding metric such as COMET has;
chrF, BLEU and MetricX (a cross-encoder) have none, and pruning needs nothing but the
pairwise scores.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.core.picking.metrics import PickingMetric

#: Bootstrap resamples per pruning step and the confidence α (mbrs's defaults).
BOOTSTRAP_SAMPLES = 500
ALPHA = 0.99
#: The first prefix of pseudo-references; each next one doubles it (8, 16, …: mbrs's
#: and Cheng & Vlachos's schedule).
FIRST_PREFIX = 8


def utilities(
    metric: PickingMetric,
    source: str,
    texts: Sequence[str],
    pairs: Sequence[tuple[int, int]],
) -> list[float]:
    """The utility of ``texts[i]`` as a hypothesis against ``texts[j]`` as the reference,
    for each ``(i, j)`` in ``pairs``, in one batch (higher is better whatever the metric)."""
    if not pairs:
        return []
    scores = metric.score(
        [source] * len(pairs), [texts[i] for i, _ in pairs], [texts[j] for _, j in pairs]
    )
    return scores if metric.higher_is_better else [-s for s in scores]


def full_mbr(
    metric: PickingMetric, source: str, texts: Sequence[str], counts: Sequence[int]
) -> list[float]:
    """Each distinct candidate's expected utility against all of them, weighted by
    ``counts`` (on the metric's own scale: for MetricX lower is still better)."""
    k = len(texts)
    pairs = [(i, j) for i in range(k) for j in range(k)]
    matrix = np.array(utilities(metric, source, texts, pairs), dtype=np.float64).reshape(k, k)
    weights = np.asarray(counts, dtype=np.float64)
    expected = (matrix @ weights) / weights.sum()
    return [float(e) if metric.higher_is_better else -float(e) for e in expected]


def pruned_mbr(
    metric: PickingMetric,
    source: str,
    texts: Sequence[str],
    counts: Sequence[int],
    seed: int = 0,
) -> list[float | None]:
    """Expected utilities by confidence-based pruning: the survivors' in full, None for
    each candidate pruned on the way (the module docstring says how)."""
    rng = np.random.default_rng(seed)
    drawn = [int(j) for j in rng.permutation(np.repeat(np.arange(len(texts)), counts))]
    alive = list(range(len(texts)))
    known: dict[tuple[int, int], float] = {}

    def score_against(refs: Sequence[int]) -> None:
        missing = sorted({(i, j) for i in alive for j in refs} - known.keys())
        known.update(zip(missing, utilities(metric, source, texts, missing), strict=True))

    size = FIRST_PREFIX
    while size < len(drawn) and len(alive) > 1:
        score_against(drawn[:size])
        table = np.array([[known[i, j] for j in drawn[:size]] for i in alive])
        best = int(np.argmax(table.mean(axis=1)))
        resamples = rng.integers(size, size=(BOOTSTRAP_SAMPLES, size))
        boot = table[:, resamples].mean(axis=2)  # (alive, resamples)
        wins = (boot >= boot[best]).mean(axis=1)
        alive = [i for i, rate in zip(alive, wins, strict=True) if rate > 1 - ALPHA]
        size *= 2
    score_against(drawn)  # the survivors' expected utilities in full
    weights = np.bincount(drawn, minlength=len(texts)).astype(np.float64)
    expected: list[float | None] = [None] * len(texts)
    for i in alive:
        row = np.array([known[i, j] for j in range(len(texts))])
        mean = float(row @ weights / weights.sum())
        expected[i] = mean if metric.higher_is_better else -mean
    return expected
