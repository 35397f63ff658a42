"""Languages as users name them (workbench.core.languages): codes, and BLEU's tokenizer."""

from __future__ import annotations

import importlib.util

import pytest

from workbench.core.config.build import build_config
from workbench.core.languages import base_language, bleu_tokenizer_for


@pytest.mark.parametrize(
    ("code", "language"),
    [
        ("zh", "zh"),
        ("zho_Hant", "zh"),
        (">>cmn_Hans<<", "zh"),
        ("__zh__", "zh"),
        ("zh_CN", "zh"),
        ("eng_Latn", "en"),
        ("de_DE", "de"),
        ("pes_Arab", "fa"),
        ("xx", "xx"),
        ("", None),
    ],
)
def test_every_familys_code_has_its_base_language(code, language):
    assert base_language(code) == language


def test_bleu_follows_the_target_language():
    assert bleu_tokenizer_for("zh") == ("zh", None)
    assert bleu_tokenizer_for("zho_Hant") == ("zh", None)
    assert bleu_tokenizer_for("de") == ("13a", None)
    name, note = bleu_tokenizer_for("ja")
    if importlib.util.find_spec("MeCab") is None:
        assert name == "char"
        assert note is not None
        assert "sacrebleu[ja]" in note
    else:
        assert (name, note) == ("ja-mecab", None)


def test_auto_is_recorded_as_the_tokenizer_it_stands_for():
    assert build_config("demo").bleu_tokenize == "zh"
    assert build_config("demo", overrides={"target_lang": "de"}).bleu_tokenize == "13a"
    assert build_config("opus-en-de").bleu_tokenize == "13a"
    chosen = build_config("demo", overrides={"target_lang": "de", "bleu_tokenize": "intl"})
    assert chosen.bleu_tokenize == "intl"
