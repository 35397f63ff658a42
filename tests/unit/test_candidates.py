"""A pick's candidates: beam search's n-best, seeded samples, or both, counted; for a
seq2seq and a decoder-only model, on transformers and on a CTranslate2 export."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.picking import varied_copy
from workbench.core.decoding import DecodeOptions
from workbench.core.picking.metrics import chrf_metric
from workbench.core.picking.picks import Picker
from workbench.core.translate.candidates import CandidateSettings, generate_candidates
from workbench.core.translate.translator import Translator
from workbench.errors import WorkbenchError

pytest.importorskip("ctranslate2")

LINES = ["I like tea.", "", "Where is the station?", "He reads a book every day."]


@pytest.fixture(scope="module")
def marian(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return varied_copy(tiny_model_dir, tmp_path_factory.mktemp("candidates") / "marian")


@pytest.fixture(scope="module")
def qwen(causal_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("candidates") / "qwen3"
    return varied_copy(causal_models["qwen3"], target, causal=True)


def load(folder: Path, backend: str) -> Translator:
    translator = Translator.from_pretrained(str(folder), device="cpu", backend=backend)
    assert translator.backend.name == ("ctranslate2" if backend == "ct2" else backend)
    return translator


@pytest.mark.parametrize("backend", ["transformers", "ct2"])
def test_the_n_best_leads_with_beam_searchs_own_translation(marian, backend):
    translator = load(marian, backend)
    base = DecodeOptions(max_new_tokens=12)
    lists = generate_candidates(translator, LINES, CandidateSettings(4, "beam"), base)
    beam = translator.translate_many(LINES, DecodeOptions(num_beams=4, max_new_tokens=12))
    assert [c.source for c in lists] == LINES
    assert lists[1].texts == ()  # an empty line has no candidates
    for line, candidates, best in zip(LINES, lists, beam, strict=True):
        if line:
            assert candidates.drawn == 4
            assert candidates.texts[0] == best


@pytest.mark.parametrize(
    ("model", "backend"),
    [
        ("marian", "transformers"),
        ("marian", "ct2"),
        ("qwen", "transformers"),
        ("qwen", "ct2"),
    ],
)
def test_samples_are_seeded_counted_and_picked_by_their_scores(model, backend, request):
    translator = load(request.getfixturevalue(model), backend)
    base = DecodeOptions(max_new_tokens=10)
    settings = CandidateSettings(6, "sample", top_p=0.9, seed=3)
    first = generate_candidates(translator, LINES, settings, base)
    again = generate_candidates(translator, LINES, settings, base)
    # CTranslate2 seeds once a process (ct2_search.py); transformers on every call
    assert (first == again) == (backend == "transformers")
    other = generate_candidates(translator, LINES, CandidateSettings(6, top_p=0.9, seed=4), base)
    assert first != other
    assert sum(len(c.texts) for c in first) > len(LINES)  # the samples differ
    for candidates in first:
        if candidates.source:
            assert candidates.drawn == 6
            assert len(set(candidates.texts)) == len(candidates.texts)
            pick = Picker("mbr", chrf_metric()).pick(candidates)
            best = max(c.score for c in pick.candidates if c.score is not None)
            assert pick.score == best


def test_both_gives_the_n_best_then_samples(marian):
    translator = load(marian, "transformers")
    base = DecodeOptions(max_new_tokens=12)
    both = generate_candidates(translator, LINES[:1], CandidateSettings(5, "both"), base)[0]
    beam = generate_candidates(translator, LINES[:1], CandidateSettings(3, "beam"), base)[0]
    assert both.drawn == 5
    assert both.texts[0] == beam.texts[0]


def test_epsilon_sampling_is_the_default_and_transformers_only(marian):
    assert CandidateSettings(4).sampling(DecodeOptions()).epsilon_cutoff == 0.02
    assert CandidateSettings(4, top_p=0.9).sampling(DecodeOptions()).epsilon_cutoff == 0.0
    samples = generate_candidates(load(marian, "transformers"), LINES[:1], CandidateSettings(4))
    assert samples[0].drawn == 4
    with pytest.raises(WorkbenchError, match=r"no epsilon sampling.*--top-p"):
        generate_candidates(load(marian, "ct2"), LINES[:1], CandidateSettings(4))


@pytest.mark.parametrize("count", [0, 1, 65])
def test_too_few_or_too_many_candidates_are_one_line(count):
    with pytest.raises(WorkbenchError, match=r"--candidates must be 2\.\.64"):
        CandidateSettings(count)


def test_candidates_beyond_the_free_memory_are_refused(marian, monkeypatch):
    import psutil

    translator = load(marian, "transformers")
    real = psutil.virtual_memory()
    monkeypatch.setattr(psutil, "virtual_memory", lambda: real._replace(available=10_000))
    with pytest.raises(WorkbenchError, match=r"candidates of one line need about .* GB"):
        generate_candidates(translator, LINES[:1], CandidateSettings(8))
