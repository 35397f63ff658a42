"""The Translator on a tiny model: batches, odd and long input, one decoding everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.decoding import DecodeOptions, clean_input
from workbench.core.translate.translator import Translator


def test_saved_tiny_model_loads_and_translates(tiny_model_dir: Path):
    translator = Translator.from_pretrained(str(tiny_model_dir), device="cpu")
    out = translator.translate_many(["I like tea.", "Hello!"], DecodeOptions(1, 8))
    # What the model itself generates for the same ids, decoded the same way: the
    # Translator adds batching and cleaning, never other words.
    for text, got in zip(["I like tea.", "Hello!"], out, strict=True):
        assert got == model_output(translator, text, 8)
        assert got  # the tiny model does say something, and at most 8 tokens of it
        assert len(translator.tokenizer(text_target=got)["input_ids"]) <= 8 + 1


def model_output(translator: Translator, text: str, max_new_tokens: int) -> str:
    """The model's own greedy output for ``text`` as given, without the Translator."""
    import torch

    tokenizer = translator.tokenizer
    ids = tokenizer(text, return_tensors="pt")
    with torch.inference_mode():
        raw = translator.model.generate(**ids, num_beams=1, max_new_tokens=max_new_tokens)
    return tokenizer.decode(raw[0], skip_special_tokens=True).strip()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "🍵🍵 tea",
        "a\x00b\x1bc",
        "bad \ud800 surrogate",
        "我喜欢茶",
        "[/bold] [red]x",
        "\x00\x01\x02",
    ],
)
def test_odd_input_never_crashes(tiny_model_dir: Path, text: str):
    translator = Translator.from_pretrained(str(tiny_model_dir), device="cpu")
    item = translator.translate(text, DecodeOptions(1, 4))
    if not text.strip() or not clean_input(text):
        assert item.notices
        assert item.text == ""
    else:  # the model was given the cleaned line (no control characters, no surrogates)
        assert item.text == model_output(translator, clean_input(text), 4)
        # Said beside the translation: what the model cannot read (the tiny vocabulary
        # lacks emoji, Han characters on the source side, some punctuation), a line
        # already in the target language; nothing else.
        kinds = ("the model cannot represent part of the input", "the input looks like zh")
        assert item.text
        assert all(n.startswith(kinds) for n in item.notices)
        if "🍵" in text:
            assert "(🍵)" in item.notices[0]
        if "茶" in text:
            assert item.notices[-1].startswith("the input looks like zh already")


def test_long_input_is_split_with_a_notice(tiny_model_dir: Path):
    translator = Translator.from_pretrained(str(tiny_model_dir), device="cpu")
    long_text = " ".join(["I like to drink green tea with my friends."] * 120)
    item = translator.translate(long_text, DecodeOptions(1, 4))
    assert any("parts" in n for n in item.notices)
    one_sentence = "word " * 3000
    item = translator.translate(one_sentence, DecodeOptions(1, 4))
    assert any("truncated" in n for n in item.notices)


def test_clean_input():
    assert clean_input("  a\tb\x00c  ") == "a b c"
    assert clean_input("x\ud800y") == "x?y"


def test_translate_many_treats_each_line_as_translate_does(tiny_model_dir):
    """Long, messy and empty lines: a set decoded in batches equals the console, line by line."""
    translator = Translator.from_pretrained(
        str(tiny_model_dir), device="cpu", backend="transformers"
    )
    translator.max_source_length = 24  # so that the long line is split at sentence ends
    lines = [
        "I like tea.",
        "",
        "  two   spaces\tand a tab ",
        "We eat. " * 12,
        "Where is the station?",
    ]
    options = DecodeOptions(num_beams=2, max_new_tokens=8)
    batched = translator.translate_many(lines, options, batch_size=4)
    assert batched == [translator.translate(line, options).text for line in lines]
    assert translator.split_long(lines[3].strip())[1]  # the long line really was split
