"""Model loading seams and the target-label check (workbench.core.model.load)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.data import hub_requests
from workbench.core.model.direction import check_target_label
from workbench.core.model.load import load_model_and_tokenizer
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
    assert ">>cmn<<" in message
    assert ">>cmn_Hans<<" in message
    assert "not a single token" in message


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
    monkeypatch.setattr(
        transformers.AutoConfig, "from_pretrained", lambda name, **_: transformers.MarianConfig()
    )
    monkeypatch.setattr(hub_requests, "ensure_hub_reachable", lambda what: None)
    load_model_and_tokenizer("Helsinki-NLP/opus-mt-en-zh")
    assert calls[0] == ("Helsinki-NLP/opus-mt-en-zh", True)
    assert ("Helsinki-NLP/opus-mt-en-zh", False) in calls


def test_hub_id_offline_names_the_fix(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubUnreachableError) as info:
        load_model_and_tokenizer("Helsinki-NLP/opus-mt-en-zh")
    assert "HF_ENDPOINT" in str(info.value)
    assert "--preset demo" in str(info.value)
