"""Preference data on real models: training sources' candidates ranked by chrF or BLEU,
chosen consistently with the ranker, cached, resumed after a stop exactly as an unbroken
build, and never read whole while half-written."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.helpers.picking import varied_copy
from workbench.core.data.pair import Pair
from workbench.core.decoding import DecodeOptions
from workbench.core.events import Note, PreferenceProgress
from workbench.core.picking.metrics import PickingMetric, bleu_metric, chrf_metric
from workbench.core.preferences.cache import PreferenceEntry
from workbench.core.preferences.preference_set import preference_records
from workbench.core.preferences.ranking import rank_sources
from workbench.core.translate.candidates import CandidateSettings
from workbench.core.translate.translator import Translator
from workbench.core.views.event_text import EventText, data_status
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


def build(translator, pairs, objective, ranker, model, **kwargs):
    return preference_records(
        translator,
        pairs,
        objective,
        SETTINGS,
        ranker,
        model=str(model),
        base=BASE,
        chunk=8,
        **kwargs,
    )


def test_records_agree_with_the_ranker_for_every_objective(translator, pairs, marian):
    chrf = chrf_metric()
    for objective in ("best", "cpo", "dpo"):
        result = build(translator, pairs, objective, chrf, marian)
        assert not result.stopped
        assert result.ranked == len(pairs)
        assert len(result.records) + result.skipped == len(pairs)
        for record in result.records:
            scores = [c.score for c in record.candidates]
            if objective == "best":
                assert record.chosen_score == max(scores)
                assert record.chosen in [c.text for c in record.candidates]
            else:
                assert record.chosen_score > record.rejected_score
                pool = [*scores, record.reference_score]
                assert (record.chosen_score, record.rejected_score) == (max(pool), min(pool))
    # chrF against the reference scores the reference 100: cpo learns it over the worst
    assert all(r.chosen == r.reference for r in result.records)


def test_a_second_run_with_another_objective_ranks_nothing(translator, pairs, marian):
    counted = Counted(chrf_metric())
    first = build(translator, pairs, "cpo", counted.ranker(), marian)
    scored = counted.texts
    assert scored > len(pairs)
    assert not first.reused
    again = build(translator, pairs, "best", counted.ranker(), marian)
    assert counted.texts == scored
    assert again.reused
    assert again.cache == first.cache
    assert str(first.cache) in again.summary
    assert "reused from" in again.summary
    assert again.summary.startswith(
        f"preferences: {len(pairs)} sources x 4 candidates ranked by chrF"
    )
    # another seed is another entry
    other = preference_records(
        translator,
        pairs,
        "cpo",
        CandidateSettings(4, "both", seed=6),
        counted.ranker(),
        model=str(marian),
        base=BASE,
        chunk=8,
    )
    assert other.cache != first.cache
    assert not other.reused


def test_a_stopped_build_resumes_to_exactly_the_unbroken_one(
    translator, pairs, marian, tmp_path, monkeypatch
):
    stop = threading.Event()
    events = []

    def emit(event):
        events.append(event)
        if isinstance(event, PreferenceProgress):
            stop.set()  # after the first chunk

    stopped = build(translator, pairs, "dpo", chrf_metric(), marian, emit=emit, stop=stop)
    assert stopped.stopped
    assert stopped.records == ()
    assert stopped.ranked == 8
    assert "stopped after 8 of 20 sources" in stopped.summary
    assert [e.done for e in events if isinstance(e, PreferenceProgress)] == [8]
    ranked = stopped.cache / "ranked.jsonl"
    assert not (stopped.cache / "done.json").exists()
    with ranked.open("a", encoding="utf-8") as fh:
        fh.write('{"source": "torn by a kill", "refer')  # a torn tail is cut off
    counted = Counted(chrf_metric())
    events.clear()
    resumed = build(translator, pairs, "dpo", counted.ranker(), marian, emit=events.append)
    assert not resumed.stopped
    assert not resumed.reused
    assert any(isinstance(e, Note) and "8 of 20 sources" in e.text for e in events)
    progress = [e for e in events if isinstance(e, PreferenceProgress)]
    assert [e.done for e in progress] == [16, 20]
    assert all(e.total == 20 and e.per_second > 0 for e in progress)
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "unbroken"))
    whole_count = Counted(chrf_metric())
    unbroken = build(translator, pairs, "dpo", whole_count.ranker(), marian)
    assert 0 < counted.texts < whole_count.texts  # the first chunk was not ranked again
    assert resumed.records == unbroken.records
    assert ranked.read_bytes() == (unbroken.cache / "ranked.jsonl").read_bytes()


def test_a_half_written_or_torn_entry_is_never_read_whole(translator, pairs, marian):
    first = build(translator, pairs, "cpo", chrf_metric(), marian)
    entry = PreferenceEntry(first.cache.parent, first.cache.name)
    assert entry.sealed() is not None
    data = entry.ranked.read_bytes()
    entry.ranked.write_bytes(data[: len(data) // 2])  # cut after its seal
    assert entry.sealed() is None
    assert not first.cache.exists()  # removed, to be built again
    counted = Counted(chrf_metric())
    again = build(translator, pairs, "cpo", counted.ranker(), marian)
    assert counted.texts > 0
    assert not again.reused
    assert again.records == first.records
    # lines without a seal are a build's chunks, never a whole entry
    (again.cache / "done.json").unlink()
    assert entry.sealed() is None
    assert len(entry.kept(8)) == 16  # the whole chunks; the last one, of 4, is dropped


def test_a_set_refuses_a_reference_ranker_on_sources_alone(translator, pairs, marian):
    alone = [Pair(p.source, "") for p in pairs[:4]]
    with pytest.raises(WorkbenchError, match="--rank-by chrF"):
        build(translator, alone, "cpo", chrf_metric(), marian)


def test_the_progress_line_is_one_wording_for_the_headless_lines_and_the_bar():
    event = PreferenceProgress("ranking", 48, 144, 3.25, 29.5)
    line = "  preferences: ranking 48/144 sources · 3.2 sources/s · ETA 30s"
    assert EventText().lines(event) == [line]
    assert data_status(event) == (48, 144, line.strip())


def test_a_decoder_only_models_candidates_are_ranked_and_chosen(causal_models, pairs, tmp_path):
    qwen = varied_copy(causal_models["qwen3"], tmp_path / "qwen3", causal=True, export=False)
    llm = Translator.from_pretrained(str(qwen), device="cpu", backend="transformers")
    result = preference_records(
        llm, pairs[:6], "cpo", SETTINGS, bleu_metric("zh"), model=str(qwen), base=BASE
    )
    assert result.ranked == 6
    assert result.records
    for record in result.records:
        assert record.chosen_score > record.rejected_score
        assert sum(c.count for c in record.candidates) == SETTINGS.count
