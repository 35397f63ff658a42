"""sacreBLEU's bootstrap resampling, in memory that does not grow with the resamples.

sacreBLEU's paired bootstrap (``PairedTest(..., test_type="bs")``) and the interval of
``corpus_score(..., n_bootstrap=...)`` draw every resample's sentence indices at once, a
(resamples × sentences) int64 array, and gather every resample's statistics at once, a
(resamples × sentences × statistics) float32 one, after caching the n-grams of every
reference: 820 MiB for 10,000 sentences and 1,000 resamples, about 8 GB for 100,000, at
the very end of a run. The numbers here are sacreBLEU's, from its own statistics and its
own definitions (``estimate_ci``, ``_compute_p_value``, ``Score.estimate_ci``); only the
bookkeeping differs:

- statistics are extracted :data:`SENTENCES_PER_BLOCK` sentences at a time (a sentence's
  statistics depend on that sentence and its references only), and the corpus score is
  ``sum_of_lists`` carried from block to block, the same additions in the same order;
- the same index draws are made a few resamples at a time: ``Generator.choice`` with
  replacement fills its output in order from one stream, so consecutive calls continue
  where one large call would have gone on (``tests/unit/test_resampling.py`` checks it);
- a resample's statistics are summed as index counts times statistics, in float64: exact
  for integer statistics (BLEU's and chrF's are counts). sacreBLEU sums them in float32,
  which is exact too while a total stays below 2**24; a resample with a larger total, or
  statistics that are not whole numbers, are summed sacreBLEU's way instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from sacrebleu.metrics.base import Metric, Score, Signature
    from sacrebleu.significance import Result

#: Sentences whose statistics are extracted at once: the references' n-gram cache of one
#: block (a few MiB) is all that sacreBLEU's extraction holds besides the statistics.
SENTENCES_PER_BLOCK = 2048
#: Sentence indices drawn at once (resamples × sentences): 2**21 int64 is 16 MiB, and a
#: block holds four arrays of that size (indices, offset indices, counts, float counts).
INDICES_PER_BLOCK = 2**21
#: float32 holds every integer below 2**24 exactly, so sums below it do not depend on the
#: order of the additions.
FLOAT32_EXACT = 2**24


@dataclass(frozen=True)
class CorpusStatistics:
    """One system's per-sentence sufficient statistics for one metric, and its score."""

    metric: Metric
    per_sentence: np.ndarray  # float32 (sentences, statistics), as sacreBLEU resamples them
    score: Score  # the corpus score, as ``metric.corpus_score`` computes it


def sacrebleu_seed() -> tuple[str, int | None]:
    """``SACREBLEU_SEED`` read as sacreBLEU reads it (default 12345, "none" = unseeded)."""
    text = os.environ.get("SACREBLEU_SEED", "12345")
    return text, None if text.lower() == "none" else int(text)


def corpus_statistics(
    metric: Metric, hypotheses: Sequence[str], references: Sequence[Sequence[str]]
) -> CorpusStatistics:
    """``metric``'s statistics of every sentence, extracted one block of sentences at a time."""
    import numpy as np
    from sacrebleu.utils import sum_of_lists

    blocks = []
    total: list[Any] = []
    for start in range(0, len(hypotheses), SENTENCES_PER_BLOCK):
        end = start + SENTENCES_PER_BLOCK
        stats = metric._extract_corpus_statistics(
            hypotheses[start:end], [list(stream[start:end]) for stream in references]
        )
        # sacreBLEU's sum over all sentences, continued: 0 + total is total, then each row.
        total = sum_of_lists([total, *stats] if total else stats)
        blocks.append(np.array(stats, dtype="float32"))
    return CorpusStatistics(
        metric=metric,
        per_sentence=np.concatenate(blocks),
        score=metric._aggregate_and_compute([total]),
    )


def resampled_scores(
    columns: Sequence[CorpusStatistics], n_samples: int, seed: int | None
) -> list[list[Score]]:
    """Each column's score on every resample of one stream of draws: what sacreBLEU's
    ``_bootstrap_resample`` and ``_paired_bs_test`` compute with a generator seeded so."""
    import numpy as np

    n = len(columns[0].per_sentence)
    rng = np.random.default_rng(seed)
    wide = np.hstack([c.per_sentence for c in columns]).astype(np.float64)
    edges = np.cumsum([0, *(c.per_sentence.shape[1] for c in columns)])
    # Index counts times statistics are exact integers only for integer statistics.
    countable = [
        bool(np.all(c.per_sentence >= 0) and np.all(c.per_sentence == np.floor(c.per_sentence)))
        for c in columns
    ]
    scores: list[list[Score]] = [[] for _ in columns]
    for indices, counts in _draws(n, n_samples, rng):
        rows = len(indices)
        totals = counts.astype(np.float64) @ wide
        for column, low, high, exact, out in zip(
            columns, edges[:-1], edges[1:], countable, scores, strict=True
        ):
            sums = totals[:, low:high]
            fast = np.all(sums < FLOAT32_EXACT, axis=1) & exact
            as_float32 = sums.astype(np.float32)
            for row in range(rows):
                stats = as_float32[row] if fast[row] else column.per_sentence[indices[row]].sum(0)
                out.append(column.metric._compute_score_from_stats(stats))
    return scores


def _draws(n: int, n_samples: int, rng: np.random.Generator) -> Iterator[tuple[Any, Any]]:
    """``(indices, counts)`` a block of resamples at a time: each resample's sentence
    indices, drawn as sacreBLEU draws them, and how often each sentence was drawn."""
    import numpy as np

    rows_per_block = max(1, INDICES_PER_BLOCK // n)
    for first in range(0, n_samples, rows_per_block):
        rows = min(rows_per_block, n_samples - first)
        indices = rng.choice(n, size=(rows, n), replace=True)
        flat = (indices + n * np.arange(rows)[:, None]).ravel()
        yield indices, np.bincount(flat, minlength=rows * n).reshape(rows, n)


def resampled_means(columns: Sequence[Sequence[float]], n_samples: int) -> list[np.ndarray]:
    """Each column's mean on every resample, on the draws sacreBLEU's bootstrap makes for
    the same number of sentences and seed: a metric scored per segment (COMET) is then
    resampled exactly as BLEU beside it is."""
    import numpy as np

    _, seed = sacrebleu_seed()
    n = len(columns[0])
    rng = np.random.default_rng(seed)
    values = np.asarray(columns, dtype=np.float64).T  # (sentences, columns)
    means = [counts.astype(np.float64) @ values / n for _, counts in _draws(n, n_samples, rng)]
    stacked = np.concatenate(means)  # (resamples, columns)
    return [stacked[:, i] for i in range(len(columns))]


def corpus_score_with_interval(
    metric: Metric,
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    n_bootstrap: int,
) -> Score:
    """``metric.corpus_score(hypotheses, references, n_bootstrap)``: the score with its
    bootstrap mean and 95% half-width (``_mean``, ``_ci``), in bounded memory."""
    statistics = corpus_statistics(metric, hypotheses, references)
    score = statistics.score
    if n_bootstrap > 1:
        text, seed = sacrebleu_seed()
        metric.n_bootstrap, metric.seed = n_bootstrap, text.lower()  # for its signature
        score.estimate_ci(_of_one_type(resampled_scores([statistics], n_bootstrap, seed)[0]))
    return score


def _of_one_type(draws: list[Score]) -> list[Score]:
    """The resamples' scores, read as float64 when they are not all of one type.

    ``Score.estimate_ci`` takes their mean with ``statistics.mean``, which refuses a list
    of Python floats and numpy float32s. chrF's score is a float32 from float32
    statistics, but a plain ``0.0`` on a resample that matched no n-gram: on a poor
    system both occur, and sacreBLEU's own ``corpus_score(..., n_bootstrap=...)`` fails
    there. A list of one type is left as it is, so every interval sacreBLEU computes is
    still its own, to the bit.
    """
    if len({type(draw.score) for draw in draws}) > 1:
        for draw in draws:
            draw.score = float(draw.score)
    return draws


@dataclass(frozen=True)
class PairedBootstrap:
    """What ``PairedTest(..., test_type="bs")()`` returns, and the paired differences."""

    signatures: dict[str, Signature]  # by the metric's name: "BLEU", "chrF2"
    table: dict[str, list[str | Result]]  # "System": names; a metric: one Result a system
    scores: dict[str, list[Score]]  # by metric name, each system's corpus score
    #: By metric name, one array per compared system: its score minus the baseline's on
    #: each resample, on the draws its p-value comes from.
    differences: dict[str, list[np.ndarray]]


def paired_bootstrap(
    named_systems: Sequence[tuple[str, Sequence[str]]],
    metrics: Mapping[str, Metric],
    references: Sequence[Sequence[str]],
    n_samples: int = 0,
) -> PairedBootstrap:
    """sacreBLEU's paired bootstrap of every system against the first, in bounded memory."""
    import numpy as np
    from sacrebleu.significance import Result, _compute_p_value, estimate_ci

    n_samples = n_samples if n_samples > 0 else 1000  # PairedTest's default for "bs"
    _, seed = sacrebleu_seed()
    systems = [
        [corpus_statistics(metric, hyps, references) for metric in metrics.values()]
        for _, hyps in named_systems
    ]
    baseline, others = systems[0], systems[1:]
    # PairedTest draws the baseline's interval with the seed itself and each comparison
    # with ``seed or None``: one stream serves all of them unless the seed is 0 or none.
    if seed:
        everything = resampled_scores([c for system in systems for c in system], n_samples, seed)
        width = len(baseline)
        per_system = [everything[i : i + width] for i in range(0, len(everything), width)]
        drawn = [(per_system[0], scores) for scores in per_system[1:]]
        baseline_draws = per_system[0]
    else:
        baseline_draws = resampled_scores(baseline, n_samples, seed)
        drawn = []
        for system in others:
            both = resampled_scores([*baseline, *system], n_samples, None)
            drawn.append((both[: len(baseline)], both[len(baseline) :]))

    signatures: dict[str, Signature] = {}
    table: dict[str, list[str | Result]] = {"System": [name for name, _ in named_systems]}
    scores: dict[str, list[Score]] = {}
    differences: dict[str, list[np.ndarray]] = {}
    for m, base in enumerate(baseline):
        name = base.score.name
        signature = base.metric.get_signature()
        signature.update("seed", str(seed).lower())
        signature.update("bs", n_samples)
        signatures[name] = signature
        mean, ci = estimate_ci(np.array([x.score for x in baseline_draws[m]]))
        table[name] = [Result(base.score.score, mean=mean, ci=ci)]
        scores[name] = [system[m].score for system in systems]
        differences[name] = []
        for system, (base_draws, system_draws) in zip(others, drawn, strict=True):
            # _paired_bs_test's statistic: |difference| on each resample, centred.
            scores_base = np.array([x.score for x in base_draws[m]])
            scores_system = np.array([x.score for x in system_draws[m]])
            mean, ci = estimate_ci(scores_system)
            sample_diffs = np.abs(scores_system - scores_base)
            real = abs(base.score.score - system[m].score.score)
            p = _compute_p_value(sample_diffs - sample_diffs.mean(), real)
            table[name].append(Result(system[m].score.score, p, mean, ci))
            differences[name].append(scores_system - scores_base)
    return PairedBootstrap(signatures, table, scores, differences)
