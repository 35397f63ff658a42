"""The workbench's COMET gives unbabel-comet 2.2.7's numbers.

``tests/fixtures/comet`` holds tiny random-weight checkpoints that unbabel-comet's own
classes built, and the scores the library itself gave them (``build_fixtures.py``, run in
an isolated venv with transformers 4.57; nothing there is written by hand). Eight models
cover what a partial port gets wrong: the layer mix (softmax, true sparsemax, per-layer
normalisation, one hidden state), the pooling (avg, max, cls, the encoder's own), the
reference-free regression and the two unified shapes (CometKiwi's mt+src, and mt+src+ref
averaged over three inputs); the segments have an empty translation, CJK text, segments
past the encoder's length bound and pairs cut only once joined.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers.paths import FIXTURES
from workbench.core.comet.inputs import joint_sequence
from workbench.core.comet.scorer import CometScorer, load_scorer

COMET_FIXTURES = FIXTURES / "comet"
EXPECTED = json.loads((COMET_FIXTURES / "expected.json").read_text(encoding="utf-8"))
SEGMENTS = json.loads((COMET_FIXTURES / "segments.json").read_text(encoding="utf-8"))
MODELS = sorted(EXPECTED["models"])
#: The issue's bar; the differences seen are about 1e-6 (thread count and SDPA kernels).
TOLERANCE = 1e-4


def sides(model: str) -> tuple[list[str], list[str], list[str] | None]:
    """The sources, translations and (for a model the library gave them to) references."""
    sources = [s["src"] for s in SEGMENTS]
    translations = [s["mt"] for s in SEGMENTS]
    given = EXPECTED["models"][model]["inputs"].split(",")
    return sources, translations, [s["ref"] for s in SEGMENTS] if "ref" in given else None


_loaded: dict[str, CometScorer] = {}


def scorer(model: str) -> CometScorer:
    if model not in _loaded:
        _loaded[model] = load_scorer(str(COMET_FIXTURES / model), device="cpu")
    loaded = _loaded[model]
    loaded._vectors.clear()  # each test encodes for itself
    return loaded


def test_the_fixtures_cover_both_classes_and_every_pooling():
    identifiers = {m["class_identifier"] for m in EXPECTED["models"].values()}
    assert identifiers == {
        "regression_metric",
        "referenceless_regression_metric",
        "unified_metric",
    }
    assert EXPECTED["versions"]["unbabel-comet"] == "2.2.7"
    assert "" in [s["mt"] for s in SEGMENTS]  # an empty hypothesis


@pytest.mark.parametrize("batch_size", [1, 8])
@pytest.mark.parametrize("model", MODELS)
def test_each_segment_equals_unbabel_comets_score(model: str, batch_size: int):
    loaded = scorer(model)
    loaded.batch_size = batch_size
    got = loaded.score(*sides(model))
    expected = EXPECTED["models"][model][f"scores_batch_{batch_size}"]
    assert len(got) == len(expected) == len(SEGMENTS)
    worst = max(abs(a - b) for a, b in zip(got, expected, strict=True))
    assert worst < TOLERANCE, f"{model}: largest difference {worst:.2e}"
    system = sum(got) / len(got)
    assert abs(system - EXPECTED["models"][model]["system_score_batch_1"]) < TOLERANCE


@pytest.mark.parametrize("model", MODELS)
def test_the_layer_mix_weights_are_the_librarys(model: str):
    loaded = scorer(model)
    mix = loaded.network.layerwise_attention
    expected = EXPECTED["models"][model]["layer_weights"]
    if mix is None:
        assert expected is None
        return
    got = [float(w) for w in mix.weights()]
    assert got == pytest.approx(expected, abs=1e-6)


def test_sparsemax_really_zeroes_a_layer_as_comet22s_does():
    weights = EXPECTED["models"]["regression-mix-sparsemax"]["layer_weights"]
    assert 0.0 in weights  # the fixture exercises the case softmax would get wrong
    mixed = scorer("regression-mix-sparsemax").network.layerwise_attention
    assert mixed is not None
    assert [float(w) for w in mixed.weights()].count(0.0) == weights.count(0.0)


def test_tokens_are_the_librarys_with_its_truncation():
    loaded = scorer("regression-mix-layernorm")
    texts = list(EXPECTED["token_ids"])
    got = loaded.encode(texts)
    assert dict(zip(texts, got, strict=True)) == EXPECTED["token_ids"]
    lengths = [len(ids) for ids in got]
    assert max(lengths) == loaded.encode.bounds.max_positions - 2  # some segment was cut


def test_a_tokenizer_json_is_read_as_written_as_transformers_4_read_it():
    """transformers 5's XLMRobertaTokenizer rebuilds its normaliser from the class; the
    library's fast tokenizer read the file as written. With a file that keeps a trailing
    or doubled space as a token, only the file itself gives the library's ids."""
    from transformers import AutoTokenizer

    from workbench.core.comet.inputs import SegmentTokenizer, SequenceBounds

    folder = COMET_FIXTURES / "encoder-legacy-json"
    rebuilt = AutoTokenizer.from_pretrained(str(folder))
    bounds = SequenceBounds(max_positions=40, cls_id=0, sep_id=2, pad_id=1)
    encode = SegmentTokenizer(rebuilt, bounds, folder / "tokenizer.json")
    texts = list(EXPECTED["legacy_token_ids"])
    assert dict(zip(texts, encode(texts), strict=True)) == EXPECTED["legacy_token_ids"]
    fallback = SegmentTokenizer(rebuilt, bounds, None)(texts)
    assert fallback != encode(texts)  # what transformers 5 alone would have given


@pytest.mark.parametrize("model", ["unified-kiwi", "unified-three"])
def test_joint_sequences_are_the_librarys(model: str):
    loaded = scorer(model)
    sources, translations, references = sides(model)
    texts = [*sources, *translations, *(references or [])]
    ids = dict(zip(texts, loaded.encode(texts), strict=True))
    parts = [("src",)] if references is None else [("src",), ("ref",), ("src", "ref")]
    for i, expected in enumerate(EXPECTED["models"][model]["concat_input_ids"]):
        side = {"src": sources[i], "ref": (references or sources)[i]}
        got = [
            list(
                joint_sequence(
                    [ids[translations[i]], *(ids[side[p]] for p in part)], loaded.encode.bounds
                )
            )
            for part in parts
        ]
        assert got == expected, f"segment {i}"
    cut = EXPECTED["segments_cut_only_when_concatenated"]
    assert cut  # the fixture has pairs that fit alone and are cut once joined


@pytest.mark.parametrize("model", ["regression-mix-sparsemax", "unified-kiwi"])
def test_systems_scored_together_equal_each_scored_alone(model: str):
    """Two systems share their sources' and references' encodings: no score may move."""
    sources, translations, references = sides(model)
    other = [t[::-1] for t in translations]
    together = scorer(model).score_systems(sources, [translations, other], references)
    alone = [scorer(model).score(sources, t, references) for t in (translations, other)]
    for joint, single in zip(together, alone, strict=True):
        assert max(abs(a - b) for a, b in zip(joint, single, strict=True)) < 1e-6


def test_a_reference_free_model_ignores_a_reference_given():
    sources, translations, _ = sides("referenceless")
    references = [s["ref"] for s in SEGMENTS]
    with_ref = scorer("referenceless").score(sources, translations, references)
    without = scorer("referenceless").score(sources, translations)
    assert with_ref == without
