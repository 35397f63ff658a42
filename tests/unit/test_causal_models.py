"""The tiny decoder-only models of tests/helpers/causal_models.py are what the Hub ships.

Each folder loads with the Auto classes as its family (architecture, tokenizer class,
special tokens, pad or none, vocabulary and position sizes, generation config), runs a
forward pass, round-trips English and Chinese text, renders its chat template (Qwen3,
Gemma) or has none (ALMA, Seed-X), holds Seed-X's language tags as single tokens, and
converts to CTranslate2 with transformers' logits and greedy tokens. Nothing of the
workbench is tested here.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers.causal_models import (
    ARCHITECTURES,
    CAUSAL_FAMILIES,
    CHAT_PROMPT,
    GEMMA_END_OF_TURN,
    GEMMA_START_OF_TURN,
    MAX_POSITIONS,
    QWEN_VOCAB_MULTIPLE,
    SEED_X_LANGUAGES,
    SEED_X_PROMPT,
    seed_x_tag,
    translation_prompt,
)

#: family -> (model_type, tokenizer class AutoTokenizer gives, (bos, eos, pad) tokens).
#: transformers 5 loads a ``mistral`` folder's LlamaTokenizer as TokenizersBackend (its
#: registered class is MistralCommonBackend, which needs Mistral's own files): Seed-X too.
EXPECTED = {
    "qwen3": ("qwen3", "Qwen2Tokenizer", (None, "<|im_end|>", "<|endoftext|>")),
    "llama": ("llama", "LlamaTokenizer", ("<s>", "</s>", None)),
    "gemma": ("gemma3_text", "GemmaTokenizer", ("<bos>", "<eos>", "<pad>")),
    "mistral": ("mistral", "TokenizersBackend", ("<s>", "</s>", None)),
}

#: The SentencePiece families' fixed ids: (unk, bos, eos, pad).
SPM_IDS = {"llama": (0, 1, 2, None), "gemma": (3, 2, 1, 0), "mistral": (0, 1, 2, None)}

SOURCE = "I like tea."
USER = "Translate into Chinese: I like tea."


def load(folder):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(folder), AutoModelForCausalLM.from_pretrained(folder)


def eos_ids(model) -> list[int]:
    eos = model.generation_config.eos_token_id
    return list(eos) if isinstance(eos, list) else [eos]


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_each_causal_family_loads_as_its_hub_model_does(causal_models, family):
    """The Auto classes give a decoder-only model of the family's architecture, its
    tokenizer class and special tokens, 512 positions on both sides, embedding rows for
    every token, the family's generation config, and logits over the vocabulary."""
    import torch

    folder = causal_models[family]
    tokenizer, model = load(folder)
    model_type, tokenizer_class, (bos, eos, pad) = EXPECTED[family]
    assert type(model).__name__ == ARCHITECTURES[family]
    assert model.config.architectures == [ARCHITECTURES[family]]
    assert model.config.model_type == model_type
    assert model.config.is_encoder_decoder is False
    assert type(tokenizer).__name__ == tokenizer_class
    assert (tokenizer.bos_token, tokenizer.eos_token, tokenizer.pad_token) == (bos, eos, pad)
    assert tokenizer.model_max_length == MAX_POSITIONS
    assert model.config.max_position_embeddings == MAX_POSITIONS
    assert (model.config.num_attention_heads, model.config.num_key_value_heads) == (2, 1)
    assert max(tokenizer.get_vocab().values()) < model.config.vocab_size
    assert not (folder / "workbench.json").exists()
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert not {"is_local", "local_files_only", "vocab_file"} & set(config)

    generation = model.generation_config
    if family == "qwen3":  # Qwen3-0.6B: tied, rows padded to a multiple of 128
        endoftext, im_end = tokenizer.convert_tokens_to_ids(["<|endoftext|>", "<|im_end|>"])
        assert model.config.tie_word_embeddings is True
        assert model.config.vocab_size % QWEN_VOCAB_MULTIPLE == 0
        assert model.config.vocab_size > len(tokenizer)
        assert eos_ids(model) == [im_end, endoftext]
        assert (generation.pad_token_id, generation.bos_token_id) == (endoftext, endoftext)
        assert (tokenizer.eos_token_id, tokenizer.pad_token_id) == (im_end, endoftext)
        assert tokenizer(SOURCE)["input_ids"][0] != endoftext  # no <s> of any kind
        assert (folder / "vocab.json").is_file()  # as the Hub ships them
        assert (folder / "merges.txt").is_file()
    else:
        unk_id, bos_id, eos_id, pad_id = SPM_IDS[family]
        assert model.config.vocab_size == len(tokenizer)
        assert model.config.tie_word_embeddings is (family == "gemma")
        special_ids = (tokenizer.unk_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id)
        assert special_ids == (unk_id, bos_id, eos_id)
        assert (tokenizer.pad_token_id, generation.pad_token_id) == (pad_id, pad_id)
        assert generation.bos_token_id == bos_id
        encoded = tokenizer(SOURCE)["input_ids"]
        assert encoded[0] == bos_id  # add_bos_token
        assert encoded[-1] != eos_id  # no add_eos_token
        assert (config["add_bos_token"], config["add_eos_token"]) == (True, False)
        assert (folder / "tokenizer.model").is_file()  # as the Hub ships it
        if family == "gemma":
            end_of_turn = tokenizer.convert_tokens_to_ids(GEMMA_END_OF_TURN)
            assert eos_ids(model) == [eos_id, end_of_turn]
        else:
            assert eos_ids(model) == [eos_id]

    ids = torch.tensor([tokenizer(SOURCE)["input_ids"]])
    with torch.no_grad():
        logits = model(ids).logits
    assert logits.shape == (1, ids.shape[1], model.config.vocab_size)
    assert torch.isfinite(logits).all()


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_each_tokenizer_round_trips_english_and_chinese_sentences(causal_models, hsk_pairs, family):
    """HSK sentences, seen in training or not, and an emoji come back as they went in,
    with no unknown token: byte-level BPE (Qwen3) and byte fallback (the others)."""
    tokenizer, _ = load(causal_models[family])
    texts = [hsk_pairs[0].source, hsk_pairs[0].target, hsk_pairs[-1].source]
    texts += [hsk_pairs[-1].target, "我喜欢喝茶 🍵 and 42 cups."]
    for text in texts:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert ids
        assert max(ids) < len(tokenizer)
        if tokenizer.unk_token_id is not None:
            assert tokenizer.unk_token_id not in ids, tokenizer.convert_ids_to_tokens(ids)
        assert tokenizer.decode(ids) == text


def test_qwen3_chat_template_renders_chatml_and_an_empty_think_block(causal_models):
    """ChatML turns; the generation prompt gets Qwen3's empty <think> block with
    enable_thinking=False, and a last assistant turn is rendered the same way, so a model
    fine-tuned on full turns is prompted as it was trained. <think> is one ordinary token."""
    tokenizer, _ = load(causal_models["qwen3"])
    user = [{"role": "user", "content": USER}]
    turn = f"<|im_start|>user\n{USER}<|im_end|>\n<|im_start|>assistant\n"
    prompt = tokenizer.apply_chat_template(
        user, add_generation_prompt=True, enable_thinking=False, tokenize=False
    )
    assert prompt == turn + "<think>\n\n</think>\n\n"
    thinking = tokenizer.apply_chat_template(user, add_generation_prompt=True, tokenize=False)
    assert thinking == turn
    system = [{"role": "system", "content": "Be brief."}, *user]
    assert tokenizer.apply_chat_template(system, tokenize=False) == (
        f"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n{USER}<|im_end|>\n"
    )
    answer = [*user, {"role": "assistant", "content": "我喜欢喝茶。"}]
    full = tokenizer.apply_chat_template(answer, tokenize=False)
    assert full == prompt + "我喜欢喝茶。<|im_end|>\n"

    think, end_think, im_end = tokenizer.convert_tokens_to_ids(
        ["<think>", "</think>", "<|im_end|>"]
    )
    assert tokenizer.eos_token_id == im_end
    ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    assert ids[0] == tokenizer.convert_tokens_to_ids("<|im_start|>")
    assert (ids.count(think), ids.count(end_think)) == (1, 1)
    assert "<think>" not in tokenizer.all_special_tokens  # decoding keeps it, as Qwen3's
    assert tokenizer.decode([think], skip_special_tokens=True) == "<think>"
    request = CHAT_PROMPT.format(source=SOURCE)
    ids = translation_prompt("qwen3", tokenizer, SOURCE)
    assert tokenizer.decode(ids) == (
        f"<|im_start|>user\n{request}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    )


def test_gemma_chat_template_renders_gemma_3_turns(causal_models):
    """<bos>, user and model turns closed by <end_of_turn>, the system message put before
    the first user turn, and one <bos> in the prompt's ids; the turn markers are special
    tokens of their own and <end_of_turn> ends generation."""
    tokenizer, model = load(causal_models["gemma"])
    user = [{"role": "user", "content": USER}]
    prompt = tokenizer.apply_chat_template(user, add_generation_prompt=True, tokenize=False)
    assert prompt == f"<bos><start_of_turn>user\n{USER}<end_of_turn>\n<start_of_turn>model\n"
    answer = [*user, {"role": "assistant", "content": "我喜欢喝茶。"}]
    assert tokenizer.apply_chat_template(answer, tokenize=False) == (
        prompt + "我喜欢喝茶。<end_of_turn>\n"
    )
    system = [{"role": "system", "content": "Be brief."}, *user]
    assert tokenizer.apply_chat_template(system, tokenize=False) == (
        f"<bos><start_of_turn>user\nBe brief.\n\n{USER}<end_of_turn>\n"
    )
    with pytest.raises(Exception, match="alternate"):
        tokenizer.apply_chat_template([*user, *user], tokenize=False)

    start, end = tokenizer.convert_tokens_to_ids([GEMMA_START_OF_TURN, GEMMA_END_OF_TURN])
    assert {GEMMA_START_OF_TURN, GEMMA_END_OF_TURN} <= set(tokenizer.all_special_tokens)
    ids = translation_prompt("gemma", tokenizer, SOURCE)
    assert ids[:2] == [tokenizer.bos_token_id, start]
    assert ids.count(tokenizer.bos_token_id) == 1
    assert ids.count(end) == 1
    assert end in eos_ids(model)


def test_alma_llama_has_no_pad_token_and_no_chat_template(causal_models):
    """As ALMA's (Llama-2's) tokenizer: no pad token anywhere, no chat template (it is
    prompted with plain text), <s> before the prompt and no </s> after it."""
    folder = causal_models["llama"]
    tokenizer, model = load(folder)
    assert (tokenizer.pad_token, tokenizer.pad_token_id) == (None, None)
    assert (model.config.pad_token_id, model.generation_config.pad_token_id) == (None, None)
    assert tokenizer.chat_template is None
    assert not (folder / "chat_template.jinja").exists()
    with pytest.raises(ValueError, match="chat_template"):
        tokenizer.apply_chat_template([{"role": "user", "content": USER}], tokenize=False)
    ids = translation_prompt("llama", tokenizer, SOURCE)
    assert ids[0] == tokenizer.bos_token_id
    assert tokenizer.eos_token_id not in ids
    assert tokenizer.decode(ids, skip_special_tokens=True).endswith(f"English: {SOURCE}\nChinese:")


def test_seed_x_language_tags_are_single_special_tokens(causal_models):
    """Each of Seed-X's 28 tags is one special token of its own inside the vocabulary; its
    prompt ends with the target's tag; no chat template and, as decided for Seed-X, no
    pad token."""
    tokenizer, model = load(causal_models["mistral"])
    tags = [seed_x_tag(code) for code in SEED_X_LANGUAGES]
    assert len(tags) == 28
    assert {"<zh>", "<en>", "<de>", "<ja>"} <= set(tags)
    for tag in tags:
        assert len(tokenizer(tag, add_special_tokens=False)["input_ids"]) == 1
    ids = tokenizer.convert_tokens_to_ids(tags)
    assert len(set(ids)) == len(tags)
    assert tokenizer.unk_token_id not in ids
    assert max(ids) < model.config.vocab_size
    assert set(tags) <= set(tokenizer.all_special_tokens)

    prompt = translation_prompt("mistral", tokenizer, SOURCE)
    assert prompt[-1] == tokenizer.convert_tokens_to_ids("<zh>")
    assert prompt.count(prompt[-1]) == 1
    text = SEED_X_PROMPT.format(source=SOURCE)
    assert tokenizer.decode(prompt, skip_special_tokens=True) == text.removesuffix("<zh>")
    assert tokenizer.chat_template is None
    assert tokenizer.pad_token is None


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_each_causal_family_converts_to_ctranslate2_as_transformers_decodes(
    causal_models, family, tmp_path
):
    """TransformersConverter converts the folder as it is; the export's logits over a
    translation prompt and its greedy tokens (stopping at the generation config's end
    tokens) are transformers'."""
    import ctranslate2
    import numpy as np
    import torch

    folder = causal_models[family]
    tokenizer, model = load(folder)
    out = tmp_path / "ct2"
    ctranslate2.converters.TransformersConverter(str(folder)).convert(str(out))
    generator = ctranslate2.Generator(str(out), device="cpu")

    prompt = translation_prompt(family, tokenizer, SOURCE)
    tokens = tokenizer.convert_ids_to_tokens(prompt)
    with torch.no_grad():
        reference = model(torch.tensor([prompt])).logits[0].numpy()
    logits = np.asarray(generator.forward_batch([tokens]))[0]
    assert logits.shape == reference.shape == (len(prompt), model.config.vocab_size)
    assert reference.std() > 0.01  # the comparison below is of something
    np.testing.assert_allclose(logits, reference, atol=1e-4)

    ids = torch.tensor([prompt])
    with torch.no_grad():
        generated = model.generate(
            ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=5
        )
    expected = generated[0, len(prompt) :].tolist()
    result = generator.generate_batch(
        [tokens],
        max_length=5,
        include_prompt_in_result=False,
        end_token=eos_ids(model),
        return_end_token=True,
    )
    assert result[0].sequences_ids[0] == expected
