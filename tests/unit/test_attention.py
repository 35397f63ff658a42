"""Cross-attention maps (workbench.core.attention.grid): extraction on a tiny model, and views."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.paths import EXPECTED
from workbench.core.attention.extract import attention_for, eager_attention, forward_attention
from workbench.core.attention.grid import AttentionMap, word_groups
from workbench.core.decoding import DecodeOptions
from workbench.errors import WorkbenchError

HEATMAP = EXPECTED / "attention_heatmap_zh_en.txt"
SENTENCE = "The cat sat on the mat."


@pytest.fixture(scope="module")
def tiny(tiny_model_dir: Path):
    from workbench.core.model.load import load_model_and_tokenizer

    model, tokenizer = load_model_and_tokenizer(str(tiny_model_dir))
    return model.eval(), tokenizer


def fixed_map() -> AttentionMap:
    """A hand-made map: 2 layers x 3 heads, pieces that merge into words, specials."""
    rng = np.random.default_rng(7)
    source = ["▁The", "▁c", "at", "▁sat", ".", "</s>"]
    target = ["▁我", "喜", "欢", "。", "</s>"]
    weights = rng.dirichlet(np.ones(len(source)), size=(2, 3, len(target)))
    return AttentionMap(
        sentence="The cat sat.",
        translation="我喜欢。",
        source_tokens=source,
        target_tokens=target,
        source_special=[False] * 5 + [True],
        target_special=[False] * 4 + [True],
        weights=weights.astype(np.float32),
    )


# --- extraction ---------------------------------------------------------------------------


def test_weights_have_the_right_shape_are_finite_and_rows_sum_to_one(tiny):
    model, tokenizer = tiny
    amap = attention_for(model, tokenizer, SENTENCE)
    layers, heads = model.config.decoder_layers, model.config.decoder_attention_heads
    assert amap.weights.shape == (layers, heads, len(amap.target_tokens), len(amap.source_tokens))
    assert np.isfinite(amap.weights).all()
    np.testing.assert_allclose(amap.weights.sum(axis=-1), 1.0, atol=1e-5)  # every head, row
    assert amap.source_tokens[-1] == "</s>"
    assert amap.source_special[-1]
    assert not any(amap.source_special[:-1])
    assert amap.target_special[-1] == (amap.target_tokens[-1] == "</s>")


def test_extraction_switches_to_eager_only_for_itself(tiny):
    model, tokenizer = tiny
    assert model.config._attn_implementation == "sdpa"  # the fast path is the default
    attention_for(model, tokenizer, SENTENCE)
    assert model.config._attn_implementation == "sdpa"
    with eager_attention(model):
        assert model.config._attn_implementation == "eager"
    assert model.config._attn_implementation == "sdpa"
    with pytest.raises(RuntimeError, match="boom"), eager_attention(model):
        raise RuntimeError("boom")  # an error inside restores it too
    assert model.config._attn_implementation == "sdpa"


@pytest.mark.parametrize("num_beams", [1, 3])
def test_generate_paths_agree_with_one_forward_pass(tiny, num_beams: int):
    model, tokenizer = tiny
    stepwise = attention_for(
        model, tokenizer, SENTENCE, options=DecodeOptions(num_beams, 16), method="generate"
    )
    forward = attention_for(
        model, tokenizer, SENTENCE, options=DecodeOptions(num_beams, 16), method="forward"
    )
    assert stepwise.target_tokens == forward.target_tokens
    np.testing.assert_allclose(stepwise.weights, forward.weights, atol=1e-5)


def test_beam_path_follows_the_chosen_beam(tiny):
    """Taking beam 0 at every step would be wrong: the chosen beam changes along the way."""
    import torch

    model, tokenizer = tiny
    ids = tokenizer(SENTENCE)["input_ids"]
    with torch.inference_mode(), eager_attention(model):
        out = model.generate(
            input_ids=torch.tensor([ids]),
            num_beams=3,
            max_new_tokens=16,
            output_attentions=True,
            output_scores=True,
            return_dict_in_generate=True,
        )
    sequence = [int(t) for t in out.sequences[0]]
    steps = len(sequence) - 1
    assert len({int(b) for b in out.beam_indices[0][:steps]}) > 1, "beams never diverged"
    beam_zero = np.stack(
        [
            torch.stack([layer[0, :, -1] for layer in out.cross_attentions[t]]).numpy()
            for t in range(steps)
        ],
        axis=2,
    )
    truth = forward_attention(model, ids, sequence)
    followed = attention_for(
        model, tokenizer, SENTENCE, options=DecodeOptions(3, 16), method="generate"
    )
    assert not np.allclose(beam_zero, truth, atol=1e-4)
    np.testing.assert_allclose(followed.weights, truth, atol=1e-5)


def test_empty_and_huge_sentences_are_refused_clearly(tiny):
    model, tokenizer = tiny
    with pytest.raises(WorkbenchError, match="empty sentence"):
        attention_for(model, tokenizer, "  \t ")
    with pytest.raises(WorkbenchError, match=r"2,000 words\); the attention view takes at most"):
        attention_for(model, tokenizer, " ".join(["tea"] * 2000))


# --- views --------------------------------------------------------------------------------


def test_layer_and_head_choices_pick_and_average():
    amap = fixed_map()
    np.testing.assert_allclose(amap.view(layer=1, head=2).matrix, amap.weights[1, 2], atol=1e-6)
    np.testing.assert_allclose(
        amap.view(layer=0, head="mean").matrix, amap.weights[0].mean(axis=0), atol=1e-6
    )
    np.testing.assert_allclose(
        amap.view(layer="mean", head="mean").matrix, amap.weights.mean(axis=(0, 1)), atol=1e-6
    )
    # None is the default view, which is what the TUI passes before any choice is made.
    np.testing.assert_allclose(
        amap.view(layer=None, head=None).matrix, amap.weights.mean(axis=(0, 1)), atol=1e-6
    )
    with pytest.raises(WorkbenchError, match="2 decoder layers"):
        amap.view(layer=2)
    assert amap.describe(-1, "mean") == "layer 2/2, mean of 3 heads"


def test_word_groups_follow_spaces_punctuation_and_cjk():
    tokens = ["▁The", "▁c", "at", "▁s", "at", ".", "</s>"]
    special = [False] * 6 + [True]
    assert word_groups(tokens, special, words=True) == [[0], [1, 2], [3, 4], [5], [6]]
    chinese = ["▁我", "喜欢", "喝", "茶", "。", "</s>"]
    assert word_groups(chinese, [False] * 5 + [True], words=True) == [[i] for i in range(6)]


def test_merging_pieces_sums_source_words_and_averages_target_words():
    amap = fixed_map()
    pieces = amap.weights[0].mean(axis=0).astype(np.float64)
    rows, cols, matrix, title = amap.view(layer=0, words=True)
    assert title == "layer 1/2, mean of 3 heads · words"
    assert cols == ["The", "cat", "sat", ".", "</s>"]
    assert rows == ["我", "喜", "欢", "。", "</s>"]  # CJK pieces stay separate units
    np.testing.assert_allclose(matrix[:, 1], pieces[:, 1] + pieces[:, 2])
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=1e-6)


def test_merging_target_pieces_averages_rows():
    amap = fixed_map()
    amap.target_tokens = ["▁li", "ke", "▁tea", ".", "</s>"]
    pieces = amap.weights[1, 0].astype(np.float64)
    rows, _, matrix, _ = amap.view(layer=1, head=0, words=True)
    assert rows == ["like", "tea", ".", "</s>"]
    np.testing.assert_allclose(matrix[0, 0], pieces[:2, 0].mean(), atol=1e-6)  # "The"
    np.testing.assert_allclose(matrix[0, 1], pieces[:2, 1:3].sum(axis=1).mean(), atol=1e-6)
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=1e-6)


def test_real_map_word_view_keeps_rows_summing_to_one(tiny):
    model, tokenizer = tiny
    amap = attention_for(model, tokenizer, SENTENCE)
    _, cols, matrix, _ = amap.view(words=True)
    assert cols == ["The", "cat", "sat", "on", "the", "mat", ".", "</s>"]
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=1e-5)
    hidden = amap.view(words=True, hide_special=True)
    assert "</s>" not in hidden.col_labels + hidden.row_labels
    np.testing.assert_allclose(hidden.matrix.sum(axis=1), 1.0, atol=1e-5)
