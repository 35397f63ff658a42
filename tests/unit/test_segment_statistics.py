"""A metric scored per segment (COMET): its interval resampled on sacreBLEU's draws, and
two systems compared by comet-compare's paired t-test (scipy's ``ttest_rel``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ttest_rel

from workbench.core.evaluate.resampling import resampled_means
from workbench.core.evaluate.segment_statistics import segment_change, segment_interval


def test_segment_means_are_resampled_on_sacrebleus_draws():
    """The same indices sacreBLEU's bootstrap draws for n sentences with its seed."""
    rng = np.random.default_rng(0)
    scores = rng.normal(50, 10, size=57).tolist()
    (means,) = resampled_means([scores], 200)
    draws = np.random.default_rng(12345).choice(57, size=(200, 57), replace=True)
    assert np.allclose(means, np.asarray(scores)[draws].mean(axis=1))


def test_a_change_of_segment_scores_has_comet_compares_t_test():
    rng = np.random.default_rng(1)
    before = rng.normal(70, 8, size=120)
    after = before + rng.normal(0.8, 3, size=120)
    change = segment_change(before.tolist(), after.tolist(), "COMET-22", "Unbabel/wmt22-comet-da")
    assert change.test == "paired t-test"
    assert change.p == pytest.approx(ttest_rel(after, before).pvalue, abs=1e-6)
    assert change.delta == pytest.approx(after.mean() - before.mean(), abs=0.006)
    assert change.delta_ci[0] < change.delta < change.delta_ci[1]
    assert change.before_ci == segment_interval(before.tolist())
    same = segment_change(before.tolist(), before.tolist(), "COMET-22")
    assert same.p == 1.0
    assert same.delta == 0.0
