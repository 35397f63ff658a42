"""The tiny family models of tests/helpers/family_models.py are what the Hub ships.

Each folder loads with the Auto classes as its family (model type, tokenizer class, special
ids, vocabulary and position sizes), its tokenizer round-trips text and holds the language
codes as single tokens, its generation config forces no language, and the Hub look-alike
serves it under the id it imitates. Nothing of the workbench is tested here.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers.family_models import (
    FAMILIES,
    HUB_IDS,
    LANGUAGES,
    MAX_POSITIONS,
    T5_PREFIX,
    code_token,
    vocab_size,
)

#: family -> (model class, model_type, tokenizer class, (pad, eos, decoder start)).
EXPECTED = {
    "nllb": ("M2M100ForConditionalGeneration", "m2m_100", "NllbTokenizer", (1, 2, 2)),
    "m2m100": ("M2M100ForConditionalGeneration", "m2m_100", "M2M100Tokenizer", (1, 2, 2)),
    "mbart50": ("MBartForConditionalGeneration", "mbart", "MBart50Tokenizer", (1, 2, 2)),
    "t5": ("T5ForConditionalGeneration", "t5", "T5Tokenizer", (0, 1, 0)),
}

#: Codes the core relies on, and how many the family's default list has.
CODES = {
    "nllb": (("eng_Latn", "zho_Hans", "zho_Hant", "deu_Latn", "fra_Latn"), 202),
    "m2m100": (("__en__", "__zh__", "__de__", "__fr__"), 100),
    "mbart50": (("en_XX", "zh_CN", "de_DE", "fr_XX"), 52),
}

SOURCE, TARGET = "I like tea.", "我喜欢喝茶。"


def all_codes(family, tokenizer) -> list[str]:
    """The family's default list of language-code tokens, in vocabulary order."""
    if family == "m2m100":
        return list(tokenizer.lang_token_to_id)
    if family == "nllb":
        from transformers.models.nllb.tokenization_nllb import FAIRSEQ_LANGUAGE_CODES
    else:
        from transformers.models.mbart50.tokenization_mbart50 import FAIRSEQ_LANGUAGE_CODES
    return list(FAIRSEQ_LANGUAGE_CODES)


def load(folder):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(folder), AutoModelForSeq2SeqLM.from_pretrained(folder)


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_loads_as_its_hub_model_does(family_models, family):
    """The Auto classes give the family's classes, ids and sizes; text round-trips; the
    generation config forces no language and there is no workbench.json."""
    folder = family_models[family]
    tokenizer, model = load(folder)
    model_class, model_type, tokenizer_class, (pad, eos, start) = EXPECTED[family]
    assert type(model).__name__ == model_class
    assert model.config.model_type == model_type
    assert type(tokenizer).__name__ == tokenizer_class
    assert (tokenizer.pad_token_id, tokenizer.eos_token_id) == (pad, eos)
    assert (model.config.pad_token_id, model.config.eos_token_id) == (pad, eos)
    assert model.config.decoder_start_token_id == start
    assert model.generation_config.decoder_start_token_id == start
    assert model.config.vocab_size == vocab_size(family, tokenizer)
    assert max(tokenizer.get_vocab().values()) < model.config.vocab_size
    if family != "m2m100":  # M2M100's len() leaves out its codes (see vocab_size)
        assert model.config.vocab_size == len(tokenizer)
    assert tokenizer.model_max_length == MAX_POSITIONS[family]
    if family == "t5":
        assert (model.config.d_model, model.config.d_kv, model.config.num_heads) == (16, 4, 2)
    else:
        assert model.config.max_position_embeddings == MAX_POSITIONS[family]

    generation = json.loads((folder / "generation_config.json").read_text(encoding="utf-8"))
    assert "forced_bos_token_id" not in generation
    assert "forced_bos_token_id" not in json.loads((folder / "config.json").read_text())
    assert not (folder / "workbench.json").exists()

    for text in (T5_PREFIX + SOURCE if family == "t5" else SOURCE, TARGET):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert tokenizer.unk_token_id not in ids, tokenizer.convert_ids_to_tokens(ids)
        assert tokenizer.decode(ids) == text
    assert tokenizer(SOURCE)["input_ids"][-1] == eos


@pytest.mark.parametrize("family", sorted(CODES))
def test_language_codes_are_single_tokens_and_name_the_languages(family_models, family):
    """Each code is one token of its own; src_lang marks the source, tgt_lang the labels,
    and generation forced to the target code starts decoder start, code."""
    import torch

    tokenizer, model = load(family_models[family])
    wanted, count = CODES[family]
    every = all_codes(family, tokenizer)
    assert len(every) == count
    assert set(wanted) <= set(every)
    ids = [tokenizer.convert_tokens_to_ids(code) for code in every]
    assert len(set(ids)) == count
    assert tokenizer.unk_token_id not in ids
    assert max(ids) < model.config.vocab_size
    assert tokenizer.convert_ids_to_tokens(ids) == every

    source, target = LANGUAGES[family]
    source_id = tokenizer.convert_tokens_to_ids(code_token(family, source))
    target_id = tokenizer.convert_tokens_to_ids(code_token(family, target))
    tokenizer.src_lang, tokenizer.tgt_lang = source, target
    encoded = tokenizer(SOURCE, text_target=TARGET)
    body = tokenizer(SOURCE, add_special_tokens=False)["input_ids"]
    assert encoded["input_ids"] == [source_id, *body, tokenizer.eos_token_id]
    assert encoded["labels"][0] == target_id
    assert encoded["labels"][-1] == tokenizer.eos_token_id

    with torch.no_grad():
        out = model.generate(
            **tokenizer(SOURCE, return_tensors="pt"),
            forced_bos_token_id=target_id,
            max_new_tokens=3,
            num_beams=1,
            do_sample=False,
        )
    assert out[0][:2].tolist() == [model.config.decoder_start_token_id, target_id]


@pytest.mark.parametrize("family", FAMILIES)
def test_the_hub_look_alike_serves_each_family_under_its_id(served_hub, tmp_path, family):
    """``from_pretrained(HUB_ID)`` downloads the family's folder from 127.0.0.1."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    hub_id = HUB_IDS[family]
    tokenizer = AutoTokenizer.from_pretrained(hub_id, cache_dir=tmp_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(hub_id, cache_dir=tmp_path)
    assert type(tokenizer).__name__ == EXPECTED[family][2]
    assert model.config.model_type == EXPECTED[family][1]
    fetched = {r.path for r in served_hub.requests() if r.method == "GET" and r.status == 200}
    assert any(path.endswith("/model.safetensors") and hub_id in path for path in fetched)
