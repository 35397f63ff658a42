"""Preference data on real models: training sources' candidates ranked by chrF or BLEU,
chosen consistently with the ranker, cached, resumed after a stop exactly as an unbroken
build, and never read whole while half-written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.helpers.picking import varied_copy
from workbench.core.data.pair import Pair
from workbench.core.decoding import DecodeOptions
from workbench.core.picking.metrics import PickingMetric, bleu_metric, chrf_metric
from workbench.core.preferences.ranking import rank_sources
from workbench.core.translate.candidates import CandidateSettings
from workbench.core.translate.translator import Translator
from workbench.errors import WorkbenchError

BASE = DecodeOptions(max_new_tokens=10)
SETTINGS = CandidateSettings(4, "both", seed=5)


@pytest.fixture(scope="module")
def marian(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("preferences") / "marian"
    return varied_copy(tiny_model_dir, target, export=False)


@pytest.fixture(scope="module")
def translator(marian: Path) -> Translator:
    return Translator.from_pretrained(str(marian), device="cpu", backend="transformers")


@pytest.fixture(scope="module")
def pairs(hsk_pairs) -> list[Pair]:
    return [Pair(p.source, p.target) for p in hsk_pairs[:20]]


class Counted:
    """A real ranker that counts the texts it is asked to score."""

    def __init__(self, metric: PickingMetric) -> None:
        self.texts = 0
        self.metric = metric

    def ranker(self) -> PickingMetric:
        def score(srcs: Sequence[str], hyps: Sequence[str], refs: Sequence[str] | None):
            self.texts += len(hyps)
            return self.metric.score(srcs, hyps, refs)

        m = self.metric
        return PickingMetric(m.name, m.higher_is_better, m.reference_free, m.family, score)


def test_each_candidate_and_reference_is_scored_by_the_ranker(translator, pairs):
    chrf = chrf_metric()
    ranked = rank_sources(translator, pairs[:6], SETTINGS, chrf, BASE)
    assert [r.source for r in ranked] == [p.source for p in pairs[:6]]
    for pair, line in zip(pairs, ranked, strict=False):
        assert line.reference == pair.target
        assert line.reference_score == pytest.approx(100.0)  # chrF of a reference against itself
        assert sum(c.count for c in line.candidates) == SETTINGS.count
        texts = [c.text for c in line.candidates]
        assert [c.score for c in line.candidates] == chrf.score(
            [pair.source] * len(texts), texts, [pair.target] * len(texts)
        )
    assert len({c.text for line in ranked for c in line.candidates}) > len(ranked)


def test_a_ranker_that_needs_a_reference_is_refused_on_sources_alone(translator, pairs):
    counted = Counted(bleu_metric())
    alone = [*pairs[:3], Pair("I like tea.", "")]
    with pytest.raises(WorkbenchError) as err:
        rank_sources(translator, alone, SETTINGS, counted.ranker(), BASE)
    message = str(err.value)
    assert "\n" not in message
    assert "--rank-by BLEU" in message
    assert "1 of the 4 training pairs" in message
    assert "--rank-by qe" in message
    assert counted.texts == 0


def test_a_reference_free_ranker_scores_sources_alone(translator, pairs):
    def length(srcs, hyps, refs):
        assert refs is None
        return [float(len(h)) for h in hyps]

    free = PickingMetric("length", True, True, "test", length)
    alone = [Pair(p.source, "") for p in pairs[:3]]
    ranked = rank_sources(translator, alone, SETTINGS, free, BASE)
    assert all(line.reference is None and line.reference_score is None for line in ranked)
    assert all(c.score == len(c.text) for line in ranked for c in line.candidates)
