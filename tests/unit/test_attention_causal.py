"""A decoder-only model's heatmap (workbench.core.attention.causal): the translation's
self-attention over the source inside the prompt, on tiny Qwen3 (chat) and ALMA-shaped
Llama (alma prompt) models; ``workbench attention`` on them is in
tests/cli/test_cli_attention_causal.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from workbench.core.attention.causal import (
    CausalPass,
    causal_map,
    causal_pass,
    source_columns,
    token_labels,
)
from workbench.core.attention.extract import AttentionModel, load_attention_model
from workbench.core.attention.grid import CROSS_ATTENTION, MAX_SOURCE_TOKENS, AttentionMap
from workbench.core.config.direction_request import DirectionRequest
from workbench.errors import WorkbenchError

SENTENCE = "I like to drink tea."
WORDS = ["I", "like", "to", "drink", "tea", "."]

#: The two prompt kinds: Qwen3's chat template, ALMA's plain prompt (Llama has no template).
PROMPTS = {"qwen3": None, "llama": "alma"}


@pytest.fixture(scope="module", params=list(PROMPTS))
def loaded(request: pytest.FixtureRequest, causal_models: dict[str, Path]) -> AttentionModel:
    family = request.param
    return load_attention_model(
        str(causal_models[family]), DirectionRequest(prompt=PROMPTS[family])
    )


@pytest.fixture(scope="module")
def traced(loaded: AttentionModel) -> tuple[CausalPass, AttentionMap]:
    run = causal_pass(loaded.model, loaded.tokenizer, SENTENCE, loaded.direction, loaded.options())
    return run, causal_map(loaded.tokenizer, SENTENCE, run, loaded.direction)


def test_the_columns_are_exactly_the_sources_tokens(
    loaded: AttentionModel, traced: tuple[CausalPass, AttentionMap]
):
    run, amap = traced
    tokenizer = loaded.tokenizer
    source = [run.prompt.ids[i] for i in run.prompt.source]
    assert tokenizer.decode(source).strip() == SENTENCE
    assert "".join(amap.source_tokens).replace("▁", " ").strip() == SENTENCE
    assert amap.source_tokens == token_labels(tokenizer, source)
    assert run.prompt.before  # the instruction is on both sides
    assert run.prompt.after
    before = tokenizer.decode([run.prompt.ids[i] for i in run.prompt.before])
    after = tokenizer.decode([run.prompt.ids[i] for i in run.prompt.after])
    assert "drink" not in before
    assert "drink" not in after
    assert run.prompt.ids == list(tokenizer(loaded.direction.source_text(SENTENCE))["input_ids"])


def test_each_row_sums_to_one_over_prompt_and_translation(
    loaded: AttentionModel, traced: tuple[CausalPass, AttentionMap]
):
    run, amap = traced
    config = loaded.model.config
    n = len(run.sequence)
    assert run.weights.shape == (config.num_hidden_layers, config.num_attention_heads, n, n)
    np.testing.assert_allclose(run.weights.sum(axis=-1), 1.0, atol=1e-5)  # every head, row
    rows, cols = run.rows, run.prompt.source
    assert rows.stop == n  # the last row read the last token but one and wrote the last
    expected = run.weights[:, :, rows.start : rows.stop, cols.start : cols.stop]
    np.testing.assert_array_equal(amap.weights, expected)
    assert amap.weights.shape[2:] == (len(amap.target_tokens), len(amap.source_tokens))
    share = amap.weights.sum(axis=-1)
    assert (share <= 1.0 + 1e-6).all()
    assert (share < 0.999).all()  # the instruction and the translation take the rest


def test_the_translation_is_the_translators(
    loaded: AttentionModel, traced: tuple[CausalPass, AttentionMap]
):
    from workbench.core.translate.translator import Translator

    run, amap = traced
    translator = Translator(loaded.model, loaded.tokenizer, direction=loaded.direction)
    assert translator.generate([SENTENCE], loaded.options()) == [amap.translation]
    assert len(amap.target_tokens) == len(run.written)
    stops = set(loaded.direction.stop_ids)
    assert not stops & set(run.written[:-1])  # nothing after a stop token


def test_a_seq2seq_map_keeps_its_title(tiny_model_dir: Path):
    amap = load_attention_model(str(tiny_model_dir)).map(SENTENCE)
    view = amap.view()
    assert amap.kind == CROSS_ATTENTION
    assert amap.heading(view) == f"cross-attention · {view.title}"


def test_byte_level_tokens_are_labelled_as_text(causal_models: dict[str, Path]):
    from transformers import AutoTokenizer
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    tokenizer = AutoTokenizer.from_pretrained(causal_models["qwen3"])
    ids = tokenizer(" tea\n", add_special_tokens=False)["input_ids"]
    assert "".join(token_labels(tokenizer, ids)) == "▁tea\\n"
    partial = tokenizer.convert_tokens_to_ids(bytes_to_unicode()[0xE8])  # 3-byte CJK's lead
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert isinstance(partial, int)
    assert isinstance(im_end, int)
    assert token_labels(tokenizer, [partial, im_end]) == ["<0xE8>", "<|im_end|>"]
    llama = AutoTokenizer.from_pretrained(causal_models["llama"])
    pieces = llama(" tea", add_special_tokens=False)["input_ids"]
    assert token_labels(llama, pieces) == llama.convert_ids_to_tokens(pieces)  # already read


def test_a_slow_tokenizer_finds_the_source_by_counting():
    class Characters:
        """A tokenizer without offsets: one token per character, as ids."""

        is_fast = False

        def __call__(self, text: str) -> dict[str, Any]:
            return {"input_ids": [ord(c) for c in text]}

    text = "Say: I like tea.\nNow:"
    ids = Characters()(text)["input_ids"]
    assert source_columns(Characters(), text, (5, 16), ids) == range(5, 16)


def test_mistakes_are_one_clear_line(loaded: AttentionModel):
    with pytest.raises(WorkbenchError, match="empty sentence"):
        loaded.map("   ")
    with pytest.raises(WorkbenchError, match=f"takes at most {MAX_SOURCE_TOKENS}"):
        loaded.map(" ".join(["tea"] * (MAX_SOURCE_TOKENS + 1)))
