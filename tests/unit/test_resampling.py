"""The bounded bootstrap gives sacreBLEU's own numbers: the same draws, scores, intervals
and p-values, exactly, with blocks small enough that every size here takes several."""

from __future__ import annotations

import importlib
import statistics
import sys
from collections.abc import Sequence

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest, Result, _bootstrap_resample

from tests.helpers.paths import REPO
from workbench.core.evaluate import resampling
from workbench.core.evaluate.resampling import (
    CorpusStatistics,
    corpus_score_with_interval,
    paired_bootstrap,
    resampled_scores,
)


def metric_column(table: dict[str, list[str | Result]], key: str) -> list[Result]:
    """A metric's column of a paired test's table: one Result a system (only the "System"
    column holds names)."""
    column = [entry for entry in table[key] if isinstance(entry, Result)]
    assert len(column) == len(table[key]), f"{key}: the column holds names"
    return column


def make_systems(n: int, rates: tuple[float, ...]) -> tuple[list[str], ...]:
    sys.path.insert(0, str(REPO / "benchmarks"))  # as benchmarks/bootstrap_memory.py runs
    return importlib.import_module("bootstrap_memory").make_systems(n, seed=n, rates=rates)


def metrics() -> dict[str, BLEU | CHRF]:
    return {"BLEU": BLEU(tokenize="zh"), "chrF": CHRF()}


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch):
    """Blocks of 64 sentences and of 7 resamples: even 40 sentences take several."""

    def with_rows(n: int) -> None:
        monkeypatch.setattr(resampling, "SENTENCES_PER_BLOCK", 64)
        monkeypatch.setattr(resampling, "INDICES_PER_BLOCK", 7 * n + 3)

    return with_rows


@pytest.mark.parametrize(("n", "samples", "rows"), [(7, 13, 3), (1001, 50, 7), (333, 1000, 64)])
@pytest.mark.parametrize("seed", [12345, 7])
def test_consecutive_draws_are_the_rows_of_one_draw(n: int, samples: int, rows: int, seed: int):
    """What the module relies on: numpy's ``choice`` continues one stream across calls
    (odd sizes, so that a draw ends inside a 64-bit word of the generator)."""
    whole = np.random.default_rng(seed).choice(n, size=(samples, n), replace=True)
    rng = np.random.default_rng(seed)
    parts = [rng.choice(n, size=(min(rows, samples - i), n)) for i in range(0, samples, rows)]
    assert np.array_equal(whole, np.concatenate(parts))


@pytest.mark.parametrize(
    ("n", "samples", "seed"), [(40, 200, "12345"), (257, 1000, "7"), (1000, 500, "2024")]
)
def test_paired_bootstrap_is_sacrebleus_paired_test(
    n: int, samples: int, seed: str, small_blocks, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("SACREBLEU_SEED", seed)
    small_blocks(n)
    # A baseline, a system close to it (a p-value that is not the smallest) and a better one.
    references, *outputs = make_systems(n, rates=(0.3, 0.28, 0.15))
    named: list[tuple[str, Sequence[str]]] = list(
        zip(("baseline", "close", "better"), outputs, strict=True)
    )
    signatures, table = PairedTest(named, metrics(), [references], "bs", samples)()
    ours = paired_bootstrap(named, metrics(), [references], samples)

    assert list(ours.table) == list(table) == ["System", "BLEU", "chrF2"]
    assert ours.table["System"] == table["System"]
    for key in ("BLEU", "chrF2"):
        assert ours.signatures[key].format() == signatures[key].format()
        for mine, theirs in zip(ours.table[key], table[key], strict=True):
            assert vars(mine) == vars(theirs)  # score, p_value, mean, ci: bit for bit
    close = metric_column(table, "BLEU")[1]
    assert close.p_value is not None
    assert 0.01 < close.p_value < 1  # the close system is not the floor
    assert [s.score for s in ours.scores["BLEU"]] == [r.score for r in metric_column(table, "BLEU")]


def test_differences_are_the_p_values_resamples(small_blocks):
    """The change on each resample, as the workbench computed it from the full draws."""
    n, samples = 300, 200
    small_blocks(n)
    references, before, after = make_systems(n, rates=(0.3, 0.2))
    ours = paired_bootstrap(
        [("before", before), ("after", after)], metrics(), [references], samples
    )
    draws = np.random.default_rng(12345).choice(n, size=(samples, n), replace=True)
    for key, metric in zip(("BLEU", "chrF2"), metrics().values(), strict=True):
        stats = [
            np.array(metric._extract_corpus_statistics(side, [references]), dtype="float32")
            for side in (before, after)
        ]
        expected = [
            metric._compute_score_from_stats(stats[1][idx].sum(0)).score
            - metric._compute_score_from_stats(stats[0][idx].sum(0)).score
            for idx in draws
        ]
        (found,) = ours.differences[key]
        assert found.tolist() == np.asarray(expected).tolist()


@pytest.mark.parametrize("n", [40, 500])
def test_corpus_score_interval_is_sacrebleus(n: int, small_blocks):
    small_blocks(n)
    references, hypotheses = make_systems(n, rates=(0.2,))
    for theirs_metric, ours_metric in zip(metrics().values(), metrics().values(), strict=True):
        theirs = theirs_metric.corpus_score(hypotheses, [references], n_bootstrap=300)
        ours = corpus_score_with_interval(ours_metric, hypotheses, [references], 300)
        assert (ours.score, ours._mean, ours._ci) == (theirs.score, theirs._mean, theirs._ci)
        assert ours.format(signature=str(ours_metric.get_signature())) == theirs.format(
            signature=str(theirs_metric.get_signature())
        )


def test_an_interval_of_zero_and_nonzero_chrf_resamples_is_their_mean(
    monkeypatch: pytest.MonkeyPatch,
):
    """chrF scores a resample that matched nothing as a plain 0.0 and the others as
    float32: sacreBLEU's own interval fails on the mix (statistics.mean refuses it); the
    workbench's is the mean and half-width of the same resamples, read as float64."""
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    hypotheses = ["我喜欢喝茶。", *["xyz"] * 9]
    references = ["我喜欢喝茶。", *["今天下雨。"] * 9]
    with pytest.raises(TypeError, match="coerce"):
        CHRF().corpus_score(hypotheses, [references], n_bootstrap=1000)
    metric = CHRF()
    _, draws = _bootstrap_resample(
        metric._extract_corpus_statistics(hypotheses, [references]), metric, 1000
    )
    raw = sorted(float(draw.score) for draw in draws)
    assert 0.0 in raw
    assert raw[-1] > 0  # both kinds of resample are there

    score = corpus_score_with_interval(CHRF(), hypotheses, [references], 1000)
    assert score.score == CHRF().corpus_score(hypotheses, [references]).score
    assert score._mean == statistics.mean(raw)
    assert score._ci == 0.5 * (raw[1000 - 25 - 1] - raw[25])


@pytest.mark.parametrize("metric", [BLEU(), CHRF()], ids=["BLEU", "chrF"])
def test_totals_past_float32_precision_are_summed_as_sacrebleu_sums(metric, small_blocks):
    """sacreBLEU's float32 sums round totals above 2**24 and sums of fractions: those take
    its arithmetic (the large and the fractional statistics here), integer counts below
    2**24 the exact index counts (the small)."""
    n, samples = 1000, 100
    small_blocks(n)
    width = len(metric._extract_corpus_statistics(["a b"], [["a b"]])[0])
    rng = np.random.default_rng(3)
    columns, expected = [], []
    for low, high, fraction in ((0, 50, 0), (30000, 50000, 0), (0, 50, 1)):
        # totals of about 25,000, 40 million, and 25,000 that are not whole numbers
        stats = (rng.integers(low, high, size=(n, width)) + fraction * rng.random()).tolist()
        per_sentence = np.array(stats, dtype="float32")
        columns.append(CorpusStatistics(metric, per_sentence, metric._aggregate_and_compute(stats)))
        expected.append([s.score for s in _bootstrap_resample(stats, metric, samples)[1]])
    found = resampled_scores(columns, samples, 12345)
    assert [[s.score for s in column] for column in found] == expected


def test_an_unseeded_test_draws_fresh_resamples(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SACREBLEU_SEED", "none")
    references, before, after = make_systems(60, rates=(0.3, 0.2))
    ours = paired_bootstrap([("before", before), ("after", after)], metrics(), [references], 100)
    assert "seed:none" in ours.signatures["BLEU"].format()
    baseline, system = metric_column(ours.table, "BLEU")
    assert system.p_value is not None
    assert 0 < system.p_value <= 1
    assert baseline.ci is not None
    assert baseline.ci > 0


def test_a_seed_of_zero_seeds_the_baselines_interval_only(monkeypatch: pytest.MonkeyPatch):
    """As PairedTest: the baseline's interval with seed 0, the comparison unseeded."""
    monkeypatch.setenv("SACREBLEU_SEED", "0")
    references, before, after = make_systems(60, rates=(0.3, 0.2))
    named: list[tuple[str, Sequence[str]]] = [("before", before), ("after", after)]
    _, table = PairedTest(named, metrics(), [references], "bs", 100)()
    ours = paired_bootstrap(named, metrics(), [references], 100)
    assert vars(ours.table["BLEU"][0]) == vars(table["BLEU"][0])
