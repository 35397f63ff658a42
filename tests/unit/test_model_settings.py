"""A saved model's workbench.json: written and read through ModelSettings, files of earlier
runs and hand-written ones read, and what the Translator takes from it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from workbench.core.config.direction_request import DirectionRequest
from workbench.core.decoding import AUTO_LABEL
from workbench.core.records.model_settings import (
    SETTINGS_FILE,
    ModelSettings,
    read_model_settings,
    write_model_settings,
)
from workbench.core.translate.translator import Translator


def test_what_a_run_writes_reads_back_as_it_was(tmp_path: Path):
    written = ModelSettings(
        family="nllb",
        source_lang="en",
        target_lang="zh",
        target_label=None,
        source_code="eng_Latn",
        target_code="zho_Hans",
        source_prefix="",
        max_source_length=128,
        bleu_tokenize="zh",
        run_dir="translation_output/runs/20260101-000000-demo",
    )
    write_model_settings(tmp_path, written)
    on_disk = json.loads((tmp_path / SETTINGS_FILE).read_text(encoding="utf-8"))
    assert on_disk["target_code"] == "zho_Hans"
    assert on_disk["target_label"] is None
    notes: list[str] = []
    assert read_model_settings(tmp_path, notes) == written
    assert notes == []


def test_a_file_of_an_earlier_run_or_a_users_hand_reads_with_what_it_has(tmp_path: Path):
    (tmp_path / SETTINGS_FILE).write_text(
        json.dumps(
            {
                "target_label": ">>cmn_Hans<<",
                "max_source_length": 64,
                "run_dir": "runs/old",
                "beams": 4,  # a key this version does not know
                "bleu_tokenize": 13,  # ill-typed: read as unrecorded
            }
        ),
        encoding="utf-8",
    )
    notes: list[str] = []
    settings = read_model_settings(tmp_path, notes)
    assert settings == ModelSettings(
        target_label=">>cmn_Hans<<", max_source_length=64, run_dir="runs/old"
    )
    assert any("'beams' ignored" in note for note in notes)
    assert any("bleu_tokenize" in note and "ill-typed" in note for note in notes)


def test_a_missing_torn_or_foreign_file_is_no_settings(tmp_path: Path):
    assert read_model_settings(tmp_path) is None
    for text in ('{"target_label": ', "[1, 2]", "\xff"):
        (tmp_path / SETTINGS_FILE).write_text(text, encoding="utf-8")
        assert read_model_settings(tmp_path) is None


def test_a_recorded_no_label_and_an_unrecorded_label_stay_apart(tmp_path: Path):
    (tmp_path / SETTINGS_FILE).write_text('{"target_label": null}', encoding="utf-8")
    none_recorded = read_model_settings(tmp_path)
    (tmp_path / SETTINGS_FILE).write_text("{}", encoding="utf-8")
    nothing_recorded = read_model_settings(tmp_path)
    assert none_recorded is not None
    assert nothing_recorded is not None
    assert DirectionRequest().over(none_recorded).target_label is None
    assert DirectionRequest().over(nothing_recorded).target_label == AUTO_LABEL
    # A new target language asks for its own label, whatever was recorded.
    labelled = ModelSettings(target_lang="zh", target_label=">>cmn_Hans<<")
    assert DirectionRequest(target_lang="de").over(labelled).target_label == AUTO_LABEL
    assert DirectionRequest().over(labelled).target_label == ">>cmn_Hans<<"


def test_the_translator_takes_the_source_limit_and_the_run_from_the_file(
    tiny_model_dir: Path, tmp_path: Path
):
    model = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model)
    write_model_settings(
        model, ModelSettings(target_label=None, max_source_length=24, run_dir="runs/r1")
    )
    translator = Translator.from_pretrained(str(model), device="cpu", backend="transformers")
    assert translator.max_source_length == 24
    assert translator.run_dir == "runs/r1"
    (model / SETTINGS_FILE).unlink()
    bare = Translator.from_pretrained(str(model), device="cpu", backend="transformers")
    assert bare.max_source_length == bare.direction.max_positions  # the model's own bound
    assert bare.run_dir is None
