"""The Lab's attention study of a decoder-only model (workbench.core.lab.prompt_attention):
where the source sits in the prompt, the causal mask as the only mask, and the share of
the translation's attention on source, instruction and translation per layer, on tiny
Qwen3 (chat) and ALMA-shaped Llama (alma prompt) models."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from workbench.core.attention.causal import causal_map, causal_pass
from workbench.core.attention.extract import AttentionModel, load_attention_model
from workbench.core.config.direction_request import DirectionRequest
from workbench.core.lab.attention_kinds import attention_kinds
from workbench.core.lab.prompt_attention import (
    PADDING,
    PromptAttention,
    mask_check,
    prompt_attention,
)
from workbench.core.records.typed import decode
from workbench.errors import WorkbenchError

SENTENCE = "I like to drink tea."

#: The two prompt kinds, and a piece of each prompt's instruction on either side.
PROMPTS = {
    "qwen3": (None, "<|im_start|>user\n", "<|im_start|>assistant"),
    "llama": ("alma", "English:", "Chinese:"),
}


@pytest.fixture(scope="module", params=list(PROMPTS))
def family(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def loaded(family: str, causal_models: dict[str, Path]) -> AttentionModel:
    asked = DirectionRequest(prompt=PROMPTS[family][0])
    return load_attention_model(str(causal_models[family]), asked)


@pytest.fixture(scope="module")
def study(loaded: AttentionModel) -> PromptAttention:
    return prompt_attention(loaded, SENTENCE)


def test_the_parts_tile_the_sequence_and_the_source_is_the_sentence(
    family: str, loaded: AttentionModel, study: PromptAttention
):
    names = [p.name for p in study.parts]
    assert names == ["before", "source", "after", "translation"]
    assert study.parts[0].start == 0
    for left, right in zip(study.parts, study.parts[1:], strict=False):
        assert left.stop == right.start
    assert study.part("source").text.strip() == SENTENCE
    _, before, after = PROMPTS[family]
    assert before in study.part("before").text
    assert after in study.part("after").text
    assert SENTENCE not in study.part("before").text + study.part("after").text
    prompt_length = len(loaded.tokenizer(loaded.direction.source_text(SENTENCE))["input_ids"])
    assert study.part("translation").start == prompt_length
    assert study.part("translation").tokens >= 1


def test_the_causal_mask_is_the_only_mask(study: PromptAttention):
    mask = study.mask
    assert mask.above_diagonal == 0.0  # exactly: the future is never read
    assert mask.zeros_below == 0  # and everything up to the diagonal is
    assert mask.row_sum_error < 1e-5
    assert mask.padding == PADDING
    assert mask.on_padding == 0.0  # left padding, masked, gets nothing
    assert mask.padded_difference < 1e-5  # and changes nothing else
    assert mask.causal_only


def test_the_mask_check_catches_a_planted_leak_and_a_planted_mask():
    n = 4
    causal = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    weights = causal[None, None].astype(np.float32)
    padded = np.zeros((1, 1, n + 2, n + 2), dtype=np.float32)
    padded[:, :, 2:, 2:] = weights
    assert mask_check(weights, padded, 2).causal_only
    leak = weights.copy()
    leak[0, 0, 0, 1] = 0.5  # a row reads the future
    assert mask_check(leak, padded, 2).above_diagonal == 0.5
    assert not mask_check(leak, padded, 2).causal_only
    window = weights.copy()
    window[0, 0, 3, 0] = 0.0  # a sliding window hides the first token from the last
    assert mask_check(window, padded, 2).zeros_below == 1
    assert not mask_check(window, padded, 2).causal_only
    padded[0, 0, 3, 0] = 0.25  # a real row looks at a pad
    assert mask_check(weights, padded, 2).on_padding == 0.25


def test_shares_per_layer_sum_to_one_and_match_the_heatmap(
    loaded: AttentionModel, study: PromptAttention
):
    assert [row.layer for row in study.layers] == list(range(loaded.model.config.num_hidden_layers))
    assert study.heads == loaded.model.config.num_attention_heads
    for row in study.layers:
        total = row.before + row.source + row.after + row.translation
        assert total == pytest.approx(1.0, abs=1e-5)
        assert 0.0 < row.source < 1.0
        assert row.instruction == pytest.approx(row.before + row.after)
        assert 0.0 < row.first_token <= row.before + 1e-9  # token 0 is the instruction's
    # The source share is the heatmap's: a row's cells summed, averaged over heads and rows.
    direction, options = loaded.direction, loaded.options()
    run = causal_pass(loaded.model, loaded.tokenizer, SENTENCE, direction, options)
    amap = causal_map(loaded.tokenizer, SENTENCE, run, direction)
    assert amap.translation == study.translation
    heatmap_share = amap.weights.astype(np.float64).sum(axis=-1).mean(axis=(1, 2))
    np.testing.assert_allclose([row.source for row in study.layers], heatmap_share, atol=1e-6)


def test_the_lab_pane_shows_the_commands_text(study: PromptAttention):
    from workbench.core.lab.prompt_attention import prompt_attention_text
    from workbench.core.lab.text import study_text

    text = study_text(study)  # what the TUI's Lab pane shows for a finished study
    assert text == prompt_attention_text(study)
    assert f"source:      {SENTENCE}" in text
    assert text.count("%") >= 6 * len(study.layers)


def test_the_json_reads_back_as_the_same_study(study: PromptAttention):
    data = json.loads(json.dumps(study.to_dict()))
    assert "the causal mask is the only mask" in data["findings"].lower()
    notes: list[str] = []
    back = decode(PromptAttention, data, notes)
    assert back is not None
    assert notes == []
    assert back.to_dict() == data
    assert back.layers[0].layer == data["layers"][0]["layer"] - 1 == 0
    assert decode(PromptAttention, {k: v for k, v in data.items() if k != "mask"}, notes) is None
    assert notes[-1] == "PromptAttention: no 'mask'; the record is read as missing"


def test_the_seq2seq_and_decoder_only_studies_refuse_each_other(
    loaded: AttentionModel, tiny_model_dir: Path
):
    with pytest.raises(WorkbenchError, match="decoder-only model: it has no encoder"):
        attention_kinds(loaded, SENTENCE)
    with pytest.raises(WorkbenchError, match="is a seq2seq model"):
        prompt_attention(load_attention_model(str(tiny_model_dir)), SENTENCE)
