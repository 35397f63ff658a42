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


def test_epsilon_sampling_is_the_default_where_the_engine_has_it(marian):
    assert CandidateSettings(4).sampling(DecodeOptions()).epsilon_cutoff == 0.02
    assert CandidateSettings(4, top_p=0.9).sampling(DecodeOptions()).epsilon_cutoff == 0.0
    assert CandidateSettings(4).sampling(DecodeOptions(), "ctranslate2").epsilon_cutoff == 0.0
    samples = generate_candidates(load(marian, "transformers"), LINES[:1], CandidateSettings(4))
    assert samples[0].drawn == 4
    assert CandidateSettings(4).engine_note("transformers") is None
    # CTranslate2 samples plainly by default, and says so; only an explicit --epsilon is refused
    ct2 = load(marian, "ct2")
    CandidateSettings(4).check_engine("ctranslate2")
    assert generate_candidates(ct2, LINES[:1], CandidateSettings(4))[0].drawn == 4
    assert "no epsilon sampling" in str(CandidateSettings(4).engine_note("ctranslate2"))
    assert CandidateSettings(4, top_p=0.9).engine_note("ctranslate2") is None
    assert CandidateSettings(4, "beam").engine_note("ctranslate2") is None
    with pytest.raises(WorkbenchError, match=r"no epsilon sampling \(--epsilon 0\.02\).*--top-p"):
        CandidateSettings(4, epsilon=0.02).check_engine("ctranslate2")


@pytest.mark.parametrize("seed", [-1, 2**32, 10**30])
def test_a_seed_the_samplers_cannot_take_is_one_line(seed):
    with pytest.raises(WorkbenchError, match=rf"--seed must be 0\.\.4294967295, got {seed}"):
        CandidateSettings(4, seed=seed)
    CandidateSettings(4, seed=2**32 - 1)


def test_a_line_gets_the_same_samples_alone_or_inside_a_file(marian):
    translator = load(marian, "transformers")
    base = DecodeOptions(max_new_tokens=10)
    settings = CandidateSettings(6, seed=5)
    alone = generate_candidates(translator, [LINES[2]], settings, base)[0]
    inside = generate_candidates(translator, [LINES[0], LINES[2], LINES[3]], settings, base)[1]
    assert len(alone.texts) > 1  # the samples differ, so the draw itself is compared
    assert inside == alone


def test_a_lines_notices_are_the_ones_translate_gives(marian):
    translator = load(marian, "transformers")
    odd = "I like 🍵 and ☕ every day."
    said = translator.translate(odd, DecodeOptions(max_new_tokens=6)).notices
    assert said  # the tiny vocabulary has neither character
    candidates = generate_candidates(translator, [odd, ""], CandidateSettings(2, "beam"))
    assert list(candidates[0].notices) == said
    assert candidates[1].notices == ()


class DroppingRows:
    """An engine that returns one row too few: the Translator must not pair rows with the
    wrong sources."""

    def __init__(self, real) -> None:
        self.real, self.name = real, "dropping"
        self.generation_config = real.generation_config

    def describe(self) -> str:
        return "dropping"

    def generate_ids(self, sources, options, bound):
        return self.real.generate_ids(sources, options, bound)[:-1]


def test_an_engine_returning_too_few_rows_is_a_clear_error(marian):
    translator = load(marian, "transformers")
    translator.backend = DroppingRows(translator.backend)
    with pytest.raises(RuntimeError, match=r"returned 5 translations for 2 sources × 3 each"):
        translator.generate_rows(LINES[2:], DecodeOptions(num_beams=3, num_return_sequences=3))


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
