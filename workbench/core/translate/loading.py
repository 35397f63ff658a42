"""What a model name loads as for translating: the settings it goes with, the engine that
generates (a CTranslate2 export or the model), and its direction.

:meth:`Translator.from_pretrained <workbench.core.translate.translator.Translator.from_pretrained>`
starts here, so ``translate``, ``interact``, the TUI, the run's before/after sets and the
Lab load a model one way. A model the workbench saved carries its settings in its
``workbench.json`` (:class:`~workbench.core.records.model_settings.ModelSettings`); a Hub
id has none, so it takes the languages of the preset that fine-tunes it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.config.direction_request import DirectionRequest
from workbench.core.languages import Direction
from workbench.core.records.model_settings import ModelSettings, read_model_settings
from workbench.core.translate.backend import GenerationBackend, TransformersBackend


def preset_settings(model: str) -> ModelSettings:
    """The languages and label of the first preset whose model is the Hub id ``model``."""
    from workbench.core.config.build import build_config
    from workbench.core.config.presets import PRESETS

    for name in PRESETS:
        config = build_config(name)
        if config.model == model:
            # The request's fields are the settings' direction fields, by name.
            return ModelSettings(**dataclasses.asdict(config.direction_request()))
    return ModelSettings()


def settings_for(model: str | Path) -> ModelSettings:
    """The decoding settings that go with a model (languages, label, source limit, run).

    A model the workbench saved carries them in its ``workbench.json``. A Hub model has
    none, so a Hub id gets the languages of the preset that fine-tunes it (opus-mt-en-zh:
    en → zh, so ``>>cmn_Hans<<``): the base model then decodes in every front end as the
    run's "before" side did, instead of without the label the multi-target model needs.
    Anything else has none recorded: every setting its default.
    """
    from workbench.core.data.sources import looks_like_local_path

    saved = read_model_settings(model)
    if saved is not None:
        return saved
    if isinstance(model, str) and not looks_like_local_path(model):
        return preset_settings(model)
    return ModelSettings()


@dataclass(frozen=True)
class LoadedEngine:
    """A model name loaded for translating, its direction set on tokenizer and model."""

    model: Any  # None for a CTranslate2 export
    tokenizer: Any
    direction: Direction
    backend: GenerationBackend
    settings: ModelSettings  # what the model (or its export) recorded
    notices: list[str] = field(default_factory=list)  # said once, at load


def load_engine(
    name: str, device: str | None, backend: str, request: DirectionRequest
) -> LoadedEngine:
    """The model ``name`` (a saved folder or a Hub id) and its engine, in the direction
    ``request`` asks, completed by what the model recorded.

    ``backend``: ``transformers``, ``ct2`` (a CTranslate2 export made with ``workbench
    export --ctranslate2``), or ``auto``: the export when one exists that matches the
    model and ctranslate2 is installed, else transformers.
    """
    from workbench.core.model.direction import apply_direction, resolve_direction
    from workbench.core.model.family import max_positions
    from workbench.core.model.load import load_model_and_tokenizer, pick_device
    from workbench.core.translate.ct2_export import choose_export

    export, notices = choose_export(name, backend)
    settings = settings_for(export if export is not None else name)
    asked = request.over(settings)
    if export is not None:
        from workbench.core.translate.ct2 import (
            CT2Backend,
            export_model_facts,
            load_export_tokenizer,
        )

        tokenizer = load_export_tokenizer(export)
        model_type, positions = export_model_facts(export)
        direction = resolve_direction(model_type, positions, tokenizer, asked, model_name=name)
        apply_direction(tokenizer, direction)
        engine = CT2Backend(export, tokenizer, device, direction=direction)
        return LoadedEngine(
            None, tokenizer, direction, engine, settings, [*notices, *direction.notes]
        )
    model, tokenizer = load_model_and_tokenizer(name)
    direction = resolve_direction(
        model.config.model_type, max_positions(model.config), tokenizer, asked, model_name=name
    )
    apply_direction(tokenizer, direction, model)
    model.eval()
    return LoadedEngine(
        model,
        tokenizer,
        direction,
        TransformersBackend(model, device or pick_device()),
        settings,
        [*notices, *direction.notes],
    )
