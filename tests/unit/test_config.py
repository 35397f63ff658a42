"""Configuration: presets, TOML and flag overrides, and validation before anything slow."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.runs import tiny_config
from workbench.core.config.build import build_config
from workbench.core.config.presets import PRESETS
from workbench.core.config.settings import load_toml
from workbench.errors import WorkbenchError


def test_default_preset_is_the_assignment():
    c = build_config()
    assert c.model == "Helsinki-NLP/opus-mt-en-zh"
    assert (c.data, c.data_config) == ("wmt/wmt19", "zh-en")
    assert c.samples == 50_000
    assert c.validation_fraction == 0.1
    # The label follows the target language (>>cmn_Hans<< on opus-mt-en-zh:
    # tests/unit/test_families.py)
    assert (c.source_lang, c.target_lang, c.target_label) == ("en", "zh", "auto")
    assert (c.max_source_length, c.max_target_length) == (128, 128)
    assert (c.batch_size, c.eval_batch_size, c.learning_rate, c.epochs) == (16, 16, 2e-5, 3.0)
    assert c.bleu_tokenize == "zh"


def test_en_de_preset_has_no_label_and_default_bleu():
    c = build_config("opus-en-de")
    assert c.model == "Helsinki-NLP/opus-mt-en-de"
    assert (c.data, c.data_config, c.target_lang) == ("wmt/wmt14", "de-en", "de")
    assert c.target_label is None
    assert c.bleu_tokenize == "13a"


def test_demo_preset_is_offline():
    c = build_config("demo")
    assert c.is_scratch
    assert c.data == "hsk"


def test_every_preset_builds_a_checked_config_holding_its_own_values():
    """Each preset passes the checks and every value it sets reaches the config (no
    setting it names is misspelt, dropped or coerced to something else)."""
    for name, values in PRESETS.items():
        config = build_config(name).to_dict()
        assert config["preset"] == name
        assert set(values) <= set(config), name
        assert {k: config[k] for k in values} == values, name


def test_toml_then_flags_override(tmp_path: Path):
    f = tmp_path / "run.toml"
    f.write_text("epochs = 5\nlearning_rate = 1e-4\n[run]\nbatch_size = 8\n", encoding="utf-8")
    c = build_config("demo", load_toml(f), {"epochs": "2"})
    assert (c.epochs, c.learning_rate, c.batch_size) == (2.0, 1e-4, 8)


def test_label_none_from_flag():
    assert build_config(overrides={"target_label": "none"}).target_label is None


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"learning_rate": "-1"}, "learning rate"),
        ({"learning_rate": "abc"}, "must be float"),
        ({"epochs": "0"}, "epochs"),
        ({"batch_size": "0"}, "batch_size"),
        ({"batch_size": "1.5"}, "must be int"),
        ({"max_source_length": "9000"}, "between 1 and 8192"),
        ({"validation_fraction": "1.5"}, "validation_fraction"),
        ({"samples": "-3"}, "samples"),
        ({"bleu_tokenize": "jieba"}, "sacreBLEU tokenizer"),
        ({"fp16": "true", "bf16": "true"}, "cannot both"),
        ({"target_label": "cmn"}, ">>cmn_Hans<<"),
        ({"target_label": "cmn"}, "--target-lang zho_Hans"),
        ({"no_such_key": 1}, "unknown config key"),
        ({"fp16": "maybe"}, "must be bool"),
    ],
)
def test_bad_values_are_one_clear_line(overrides, needle):
    with pytest.raises(WorkbenchError) as info:
        build_config(overrides=overrides)
    message = str(info.value)
    assert needle in message
    assert "\n" not in message


def test_unknown_preset():
    with pytest.raises(WorkbenchError, match="unknown preset 'nope'"):
        build_config("nope")


def test_bad_toml_file(tmp_path: Path):
    f = tmp_path / "bad.toml"
    f.write_text("epochs = = 3", encoding="utf-8")
    with pytest.raises(WorkbenchError, match="not valid TOML"):
        load_toml(f)
    with pytest.raises(WorkbenchError, match="not found"):
        load_toml(tmp_path / "missing.toml")


def test_output_dir_that_is_a_file(tmp_path: Path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(WorkbenchError, match="not a folder"):
        build_config(overrides={"output_dir": str(f)})


def test_report_to_an_unknown_tool_is_refused():
    from workbench.errors import WorkbenchError

    with pytest.raises(WorkbenchError, match="report_to 'wandb' is not supported"):
        tiny_config(report_to="wandb")
