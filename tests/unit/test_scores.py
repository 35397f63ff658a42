"""Before/after scores: sacreBLEU's numbers, its paired test, and the one headline format."""

from __future__ import annotations

import pytest
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest, Result

from workbench.core.evaluate.significance import score_before_after, score_systems
from workbench.core.records.scores import SetScores
from workbench.core.views.score_text import format_p, headline

REFS = [
    "我喜欢喝茶。",
    "他是我的朋友。",
    "今天天气很好。",
    "我们一起去学校吧。",
    "这本书很有意思。",
    "你叫什么名字？",
    "我家有五口人。",
    "明天见。",
] * 5
AFTER = [
    "我喜欢喝茶。",
    "他是朋友。",
    "今天天气好。",
    "我们去学校。",
    "这本书很有意思。",
    "你叫什么？",
    "我家有人。",
    "明天见。",
] * 5
BEFORE = ["的的的", "我我", "天", "学学学", "书", "你", "家", "见"] * 5


def test_scores_are_sacrebleus_own():
    s = score_before_after(BEFORE, AFTER, REFS, "zh", "test", "unit", n_bootstrap=200)
    assert s.bleu_after == round(sacrebleu.corpus_bleu(AFTER, [REFS], tokenize="zh").score, 2)
    assert s.chrf_before == round(sacrebleu.corpus_chrf(BEFORE, [REFS]).score, 2)
    assert s.bleu_delta == pytest.approx(s.bleu_after - s.bleu_before, abs=0.011)
    # The p-value is PairedTest's, run the way `sacrebleu --paired-bs` runs it.
    _, table = PairedTest(
        [("before", BEFORE), ("after", AFTER)],
        {"BLEU": BLEU(tokenize="zh"), "chrF": CHRF()},
        [REFS],
        test_type="bs",
        n_samples=200,
    )()
    bleu, chrf = table["BLEU"][1], table["chrF2"][1]  # the second system's: "after"
    assert isinstance(bleu, Result)
    assert isinstance(chrf, Result)
    assert bleu.p_value is not None
    assert chrf.p_value is not None
    assert s.bleu_p == round(bleu.p_value, 6)
    assert s.chrf_p == round(chrf.p_value, 6)
    assert s.bleu_p < 0.05  # a large gain on 40 sentences
    # Each interval holds its score, the delta's holds the delta and excludes 0 here.
    for score, (low, high) in (
        (s.bleu_before, s.bleu_before_ci),
        (s.bleu_after, s.bleu_after_ci),
        (s.chrf_after, s.chrf_after_ci),
        (s.bleu_delta, s.bleu_delta_ci),
    ):
        assert low <= score <= high
    assert s.bleu_delta_ci[0] > 0
    assert "tok:zh" in s.bleu_signature
    assert "bs:200" in s.bleu_signature


def test_systems_have_both_p_values_of_paired_test_against_the_first():
    """The Lab's systems: each one's BLEU and chrF p against the first are PairedTest's,
    and the first's own are 1.0."""
    scores = score_systems([("before", BEFORE), ("after", AFTER)], REFS, "zh", n_bootstrap=200)
    _, table = PairedTest(
        [("before", BEFORE), ("after", AFTER)],
        {"BLEU": BLEU(tokenize="zh"), "chrF": CHRF()},
        [REFS],
        test_type="bs",
        n_samples=200,
    )()
    bleu, chrf = table["BLEU"][1], table["chrF2"][1]
    assert isinstance(bleu, Result)
    assert isinstance(chrf, Result)
    assert bleu.p_value is not None
    assert chrf.p_value is not None
    assert (scores["after"].bleu_p, scores["after"].chrf_p) == (
        round(bleu.p_value, 6),
        round(chrf.p_value, 6),
    )
    assert (scores["before"].bleu_p, scores["before"].chrf_p) == (1.0, 1.0)


def test_identical_outputs_are_no_difference():
    s = score_before_after(AFTER, AFTER, REFS, "zh", "validation", "unit", n_bootstrap=100)
    assert s.bleu_delta == 0.0
    assert s.bleu_delta_ci == [0.0, 0.0]
    assert s.bleu_p == 1.0  # sacreBLEU alone would say p = 1/101 for a zero difference


def test_headline_names_the_set_and_survives_json():
    s = score_before_after(BEFORE, AFTER, REFS, "zh", "test", "newstest2018", n_bootstrap=100)
    line = headline(s)
    assert line.startswith(
        f"test (newstest2018, 40): BLEU {s.bleu_before:.2f} → "
        f"{s.bleu_after:.2f} ({s.bleu_delta:+.2f}, 95% CI "
    )
    assert SetScores.from_dict(s.to_dict()) == s
    assert SetScores.from_dict({"role": "test"}) is None  # an old or partial summary


def test_p_value_wording():
    assert format_p(1 / 1001, 1000) == "p < 0.001"
    assert format_p(0.0321, 1000) == "p = 0.032"


def test_equal_scores_from_different_outputs_are_no_difference():
    s = score_before_after(["甲"] * 40, ["乙"] * 40, REFS, "zh", "test", "unit", n_bootstrap=100)
    assert s.bleu_before == s.bleu_after == 0.0
    assert s.bleu_p == 1.0  # not sacreBLEU's "p < 0.001" for a zero difference
