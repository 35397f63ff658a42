"""Each delta read on Kocmi et al. (2024)'s fitted curve.

The readings come from the authors' own package (mt-thresholds); these tests hold them to
the paper's published table (``appendix/main_thresholds.tex`` of kocmitom/MT-Thresholds:
the delta at which each metric agrees with humans 50 … 95% of the time).
"""

from __future__ import annotations

import pytest

from workbench.core.views.human_agreement import (
    agreement,
    agreement_brief,
    agreement_line,
    agreement_text,
    ceiling,
)

#: The paper's table: metric -> {accuracy %: delta}, COMET ×100.
PAPER = {
    "BLEU": {50: 0.27, 60: 0.78, 70: 1.39, 80: 2.34, 85: 3.35},
    "chrF": {50: 0.14, 60: 0.54, 70: 1.00, 80: 1.63, 85: 2.12, 90: 3.05},
    "COMET-22": {50: 0.03, 60: 0.18, 70: 0.35, 80: 0.56, 85: 0.71, 90: 0.94, 95: 1.53},
    "CometKiwi-22": {50: 0.01, 60: 0.16, 70: 0.33, 80: 0.53, 85: 0.67, 90: 0.85, 95: 1.18},
}


@pytest.mark.parametrize("metric", sorted(PAPER))
def test_the_curves_give_the_papers_table(metric: str):
    for accuracy, delta in PAPER[metric].items():
        # The table's deltas are rounded to 0.01: within that, the accuracy it names.
        low, high = agreement(metric, delta - 0.005), agreement(metric, delta + 0.005)
        assert low is not None
        assert high is not None
        assert low - 0.6 <= accuracy <= high + 0.6, (metric, accuracy, low, high)


def test_bleu_never_reaches_90_percent_and_says_so_at_its_ceiling():
    top = ceiling("BLEU")
    assert top is not None
    assert 88.0 < top < 88.5
    assert agreement_text("BLEU", 13.60) == "humans agree 88%: as far as BLEU goes"
    assert agreement_text("BLEU", 0.4) == "humans agree 53%: close to a coin toss"
    assert agreement_text("BLEU", 0.1) == "humans agree 50%: a coin toss"  # the fit dips below
    assert agreement_text("BLEU", -2.34) == agreement_text("BLEU", 2.34)  # a fall reads alike
    assert agreement_text("BLEU", 2.34) == "humans agree 80%"


def test_metrics_without_a_curve_are_not_read_and_other_comets_say_whose_curve():
    assert agreement_text("chrF++", 5.0) is None
    assert agreement_text("TER", -5.0) is None
    assert agreement_brief("TER", 1.0) == ""
    own = "curve: this COMET model has none of its own)"
    assert agreement_text("COMET", 0.94) == f"humans agree 90% (read on COMET-22's {own}"
    assert agreement_text("COMET-QE", 0.85) == f"humans agree 90% (read on CometKiwi-22's {own}"
    assert agreement_text("COMET-21", 2.0) is None  # its own scale, no curve: not read
    line = agreement_line([("BLEU", 1.0), ("chrF++", 2.0), ("COMET-22", 0.5)])
    assert line == (
        "what humans would say (Kocmi et al. 2024): BLEU +1.00, humans agree 64% · "
        "COMET-22 +0.50, humans agree 77%"
    )
    assert agreement_line([("TER", 3.0)]) is None
