"""Intervals and paired tests for a metric scored per segment, such as COMET.

A COMET system score is the mean of its segment scores, so its uncertainty is the
bootstrap's over segments, and two systems on the same segments are compared as
unbabel-comet's ``comet-compare`` compares them: a paired t-test on the segment scores
(``scipy.stats.ttest_rel``, two-sided), beside the bootstrap. The resamples here are drawn
as sacreBLEU draws BLEU's (same seed, same sentence indices, :func:`.resampling.resampled_means`),
so the COMET interval and the BLEU interval of one set come from the same resampled sets.
The interval of a difference is read off those paired resamples, as for BLEU.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from workbench.core.evaluate.resampling import resampled_means
from workbench.core.evaluate.significance import UNBOUNDED, percentile_interval
from workbench.core.records.scores import N_BOOTSTRAP, MetricChange


def mean(scores: Sequence[float]) -> float:
    """The system score: the mean of the segment scores (0 for no segments)."""
    return math.fsum(scores) / len(scores) if scores else 0.0


def segment_interval(scores: Sequence[float], n_bootstrap: int = N_BOOTSTRAP) -> list[float]:
    """The 95% interval of the mean, as sacreBLEU writes BLEU's: the bootstrap mean ± its
    95% half-width."""
    from sacrebleu.significance import estimate_ci

    if len(scores) < 2:
        return [round(mean(scores), 2)] * 2
    (means,) = resampled_means([scores], n_bootstrap)
    centre, half = estimate_ci(means)
    return [round(centre - half, 2) + 0.0, round(centre + half, 2) + 0.0]


def t_test_p(before: Sequence[float], after: Sequence[float]) -> float:
    """comet-compare's paired t-test (two-sided) of after against before; 1.0 where the
    segments do not differ at all (the test has no variance to go on)."""
    from scipy.stats import ttest_rel

    if len(before) < 2 or all(a == b for a, b in zip(before, after, strict=True)):
        return 1.0
    p = float(ttest_rel(after, before).pvalue)
    return round(p, 6) if math.isfinite(p) else 1.0


def segment_change(
    before: Sequence[float],
    after: Sequence[float],
    metric: str,
    model: str | None = None,
    n_bootstrap: int = N_BOOTSTRAP,
) -> MetricChange:
    """``after`` against ``before`` on the same segments (scores on the scale shown)."""
    delta_ci = [0.0, 0.0]
    if len(before) >= 2:
        base, other = resampled_means([before, after], n_bootstrap)
        delta_ci = percentile_interval(other - base, UNBOUNDED)
    return MetricChange(
        metric=metric,
        before=round(mean(before), 2),
        after=round(mean(after), 2),
        before_ci=segment_interval(before, n_bootstrap),
        after_ci=segment_interval(after, n_bootstrap),
        delta=round(mean(after) - mean(before), 2) + 0.0,
        delta_ci=delta_ci,
        p=t_test_p(before, after),
        test="paired t-test",
        model=model,
    )
