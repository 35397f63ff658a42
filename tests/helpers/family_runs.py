"""A family's tiny run: the Hub-shaped folder of each family, the settings that tell it the
language pair, and the tiny run config over a model and a data file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.family_models import T5_PREFIX


def run_args(family: str) -> dict[str, object]:
    """The settings that tell a family the pair: en -> zh, and T5's prefix."""
    # auto: the label of the target language (the demo preset tiny_config starts from has none)
    extra: dict[str, object] = {"source_lang": "en", "target_lang": "zh", "target_label": "auto"}
    if family == "t5":
        extra["source_prefix"] = T5_PREFIX
    return extra


@pytest.fixture(scope="module")
def model_folders(family_models, hub_server) -> dict[str, Path]:
    """family -> the Hub-shaped folder (the Marian look-alike from the Hub server)."""
    from tests.helpers.hub_repos import OPUS_MODEL

    return {"marian": hub_server.repos[("model", OPUS_MODEL)].folder, **family_models}


def tiny_run_config(model: Path, data: Path, output: Path, **extra: object):
    from tests.helpers.runs import tiny_config

    return tiny_config(
        model=str(model),
        data=str(data),
        samples=0,
        epochs=1.0,
        batch_size=16,
        learning_rate=1e-3,
        max_new_tokens=8,
        logging_steps=2,
        output_dir=str(output),
        **extra,
    )
