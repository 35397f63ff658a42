"""What a saved model records beside its weights, so every front end decodes it as its run
did: ``workbench.json``.

A run writes it into ``best_model/`` (and a scratch run's ``initial_model/``), a LoRA run
beside the merged model, and a CTranslate2 export copies it. ``translate``, ``interact``,
``attention``, the Lab and the TUI read it back to take the model's languages, label,
prefix or prompt, its source limit, its BLEU tokenizer and the run that trained it, with
no flags. Every field has a default, so a file an earlier run wrote, one a user wrote by
hand with only ``{"target_label": null}``, or one with keys this version no longer knows
reads through the one decoder (:func:`~workbench.core.records.typed.decode`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.atomic import write_json
from workbench.core.decoding import AUTO_LABEL, LENGTH_CEILING
from workbench.core.records.files import read_json_dict
from workbench.core.records.typed import decode

#: The file beside a model's weights that holds its :class:`ModelSettings`.
SETTINGS_FILE = "workbench.json"


@dataclass(frozen=True)
class ModelSettings:
    """A saved model's direction and limits, as its run resolved them; a field left at its
    default was not recorded (the model's own, or the workbench's default)."""

    family: str | None = None  # the model family the direction was resolved for
    source_lang: str | None = None  # as the user named it: en
    target_lang: str | None = None
    #: Marian's label (``>>cmn_Hans<<``), None for none; :data:`AUTO_LABEL` when the file
    #: names none, so a missing key and a recorded "no label" stay apart.
    target_label: str | None = AUTO_LABEL
    source_code: str | None = None  # the family's own codes (eng_Latn, zho_Hans)
    target_code: str | None = None
    source_prefix: str | None = None  # T5's task prefix; None under a prompt
    prompt: str | None = None  # a decoder-only model's: chat, alma, seed-x or template
    prompt_template: str | None = None  # the prompt's text, as the run sent it
    #: Tokens a source may have; the ceiling when unrecorded (a Hub model: the model's
    #: own positions then bound it).
    max_source_length: int = LENGTH_CEILING
    bleu_tokenize: str | None = None  # sacreBLEU's tokenizer for the target language
    run_dir: str | None = None  # the run that trained the model, as it was given

    def to_dict(self) -> dict[str, Any]:
        """The object ``workbench.json`` holds: every field, named as here."""
        return dataclasses.asdict(self)


def read_model_settings(
    model_dir: str | Path, notes: list[str] | None = None
) -> ModelSettings | None:
    """The settings saved beside the model in ``model_dir``, or None when it has no
    readable ``workbench.json`` (a Hub model, a model saved elsewhere, a torn file);
    what was read as missing or ignored is said in ``notes``."""
    data = read_json_dict(Path(model_dir) / SETTINGS_FILE)
    if data is None:
        return None
    return decode(ModelSettings, data, notes, SETTINGS_FILE) or ModelSettings()


def write_model_settings(model_dir: Path, settings: ModelSettings) -> None:
    """Write ``model_dir/workbench.json`` atomically."""
    write_json(model_dir / SETTINGS_FILE, settings.to_dict())
