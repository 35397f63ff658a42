"""Model loading seams, the target-label check and the translator on a tiny model."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core import modeling
from workbench.core.decoding import DecodeOptions, clean_input
from workbench.core.modeling import check_target_label, load_model_and_tokenizer
from workbench.core.translation import Translator
from workbench.errors import HubUnreachableError, WorkbenchError


class VocabTokenizer:
    def __init__(self, tokens):
        self.tokens = tokens

    def get_vocab(self):
        return {t: i for i, t in enumerate(self.tokens)}


def test_label_must_be_one_known_token():
    tok = VocabTokenizer(["</s>", ">>cmn_Hans<<", ">>cmn_Hant<<", "▁I"])
    check_target_label(tok, ">>cmn_Hans<<")
    check_target_label(tok, None)
    with pytest.raises(WorkbenchError) as info:
        check_target_label(tok, ">>cmn<<")
    message = str(info.value)
    assert ">>cmn<<" in message and ">>cmn_Hans<<" in message and "not a single token" in message


def test_label_on_a_model_without_labels():
    with pytest.raises(WorkbenchError, match="set target_label = none"):
        check_target_label(VocabTokenizer(["</s>", "a"]), ">>deu<<")


def test_missing_local_folder_is_never_sent_to_the_hub(monkeypatch, tmp_path: Path):
    import transformers

    def boom(*a, **k):
        raise AssertionError("from_pretrained must not be called")

    monkeypatch.setattr(transformers.AutoModelForSeq2SeqLM, "from_pretrained", boom)
    with pytest.raises(WorkbenchError, match="does not exist"):
        load_model_and_tokenizer(str(tmp_path / "nope" / "best_model"))
    with pytest.raises(WorkbenchError, match="does not exist"):
        load_model_and_tokenizer("./best_model_typo")


def test_hub_id_tries_the_cache_then_the_hub(monkeypatch):
    import transformers

    calls = []

    def fake(name, **kwargs):
        calls.append((name, kwargs.get("local_files_only", False)))
        if kwargs.get("local_files_only"):
            raise OSError("not cached")
        return object()

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", fake)
    monkeypatch.setattr(transformers.AutoModelForSeq2SeqLM, "from_pretrained", fake)
    monkeypatch.setattr(modeling, "ensure_hub_reachable", lambda what: None)
    load_model_and_tokenizer("Helsinki-NLP/opus-mt-en-zh")
    assert calls[0] == ("Helsinki-NLP/opus-mt-en-zh", True)
    assert ("Helsinki-NLP/opus-mt-en-zh", False) in calls


def test_hub_id_offline_names_the_fix(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubUnreachableError) as info:
        load_model_and_tokenizer("Helsinki-NLP/opus-mt-en-zh")
    assert "HF_ENDPOINT" in str(info.value) and "--preset demo" in str(info.value)


def test_saved_tiny_model_loads_and_translates(tiny_model_dir: Path):
    translator = Translator.from_pretrained(str(tiny_model_dir), device="cpu")
    out = translator.translate_many(["I like tea.", "Hello!"], DecodeOptions(1, 8))
    assert len(out) == 2 and all(isinstance(t, str) for t in out)


@pytest.mark.parametrize(
    "text",
    ["", "   ", "🍵🍵 tea", "a\x00b\x1bc", "bad \ud800 surrogate", "我喜欢茶", "[/bold] [red]x",
     "\x00\x01\x02"],
)
def test_odd_input_never_crashes(tiny_model_dir: Path, text: str):
    translator = Translator.from_pretrained(str(tiny_model_dir), device="cpu")
    item = translator.translate(text, DecodeOptions(1, 4))
    assert isinstance(item.text, str)
    if not text.strip() or not clean_input(text):
        assert item.notices and item.text == ""


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
    from workbench.core.decoding import DecodeOptions
    from workbench.core.translation import Translator

    translator = Translator.from_pretrained(str(tiny_model_dir), device="cpu",
                                            backend="transformers")
    translator.max_source_length = 24  # so that the long line is split at sentence ends
    lines = ["I like tea.", "", "  two   spaces\tand a tab ", "We eat. " * 12,
             "Where is the station?"]
    options = DecodeOptions(num_beams=2, max_new_tokens=8)
    batched = translator.translate_many(lines, options, batch_size=4)
    assert batched == [translator.translate(line, options).text for line in lines]
    assert translator.split_long(lines[3].strip())[1]  # the long line really was split
