"""BLEU and chrF on cases small enough to check by hand."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from workbench.core.evaluate.metrics import (
    corpus_bleu,
    corpus_chrf,
    decode_ids,
    make_compute_metrics,
)


def test_identical_is_100_and_disjoint_is_0():
    assert corpus_bleu(["我 喜欢 茶"], ["我 喜欢 茶"], "zh") == pytest.approx(100.0)
    assert corpus_bleu(["甲乙丙丁"], ["子丑寅卯"], "zh") == pytest.approx(0.0)


def test_zh_tokenizer_splits_characters_where_13a_cannot():
    hyp, ref = ["我喜欢喝茶。"], ["我喜欢喝咖啡。"]
    # 13a sees one token per sentence: no unigram match at all.
    assert corpus_bleu(hyp, ref, "13a") == pytest.approx(0.0)
    # zh: 我 喜 欢 喝 茶 。 vs 我 喜 欢 喝 咖 啡 。 (6 vs 7 tokens).
    # matches: 1-gram 5/6, 2-gram 3/5, 3-gram 2/4, 4-gram 1/3; BP = exp(1 - 7/6).
    expected = 100 * math.exp(1 - 7 / 6) * (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
    assert corpus_bleu(hyp, ref, "zh") == pytest.approx(expected, abs=1e-6)


def test_chrf_orders_hypotheses():
    ref = ["我喜欢喝茶。"]
    assert corpus_chrf(["我喜欢喝茶。"], ref) == pytest.approx(100.0)
    assert corpus_chrf(["我喜欢喝水。"], ref) > corpus_chrf(["他去学校。"], ref)


class FakeTokenizer:
    pad_token_id = 0

    def __init__(self) -> None:
        self.vocab = {0: "", 1: "我", 2: "喜欢", 3: "茶"}

    def batch_decode(self, rows, skip_special_tokens=True):
        return ["".join(self.vocab[int(i)] for i in row) for row in rows]


def test_minus_100_is_replaced_before_decoding():
    ids = np.array([[1, 2, 3, -100, -100], [1, -100, -100, -100, -100]])
    assert decode_ids(ids, FakeTokenizer()) == ["我喜欢茶", "我"]


def test_compute_metrics_uses_raw_references():
    compute = make_compute_metrics(FakeTokenizer(), "zh", references=["我喜欢茶", "我"])
    preds = np.array([[1, 2, 3, 0], [1, 0, 0, 0]])
    labels = np.array([[1, -100, -100, -100], [3, -100, -100, -100]])  # decoy labels
    out = compute(SimpleNamespace(predictions=preds, label_ids=labels))
    assert out["bleu"] == pytest.approx(100.0)
    assert out["distinct"] == 1.0
