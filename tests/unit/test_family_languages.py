"""A family's languages checked without training: a full NLLB code and an unknown one, a
language mistake refused before the run folder, and the length bound the model gives, on the
tiny Hub-shaped models (tests/helpers/family_models.py and the Marian look-alike of
tests/helpers/hub_repos.py).

Split from tests/e2e/test_family_runs.py, whose tests train a run per family.
"""

from __future__ import annotations

import pytest

from tests.helpers.family_runs import run_args, tiny_run_config
from workbench.errors import WorkbenchError


def test_the_target_language_takes_a_full_code_and_an_unknown_one_lists_the_codes(
    model_folders,
):
    from workbench.core.config.direction_request import DirectionRequest
    from workbench.core.translate.translator import Translator

    nllb = str(model_folders["nllb"])
    hant = Translator.from_pretrained(
        nllb, backend="transformers", request=DirectionRequest(target_lang="zho_Hant")
    )
    assert hant.direction.target_code == "zho_Hant"
    with pytest.raises(WorkbenchError, match="'xx' is not a language of this NLLB-200") as err:
        Translator.from_pretrained(
            nllb, backend="transformers", request=DirectionRequest(target_lang="xx")
        )
    assert "zho_Hans" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("family", "setting", "needle"),
    [
        ("marian", {"target_label": ">>xx<<"}, "target label '>>xx<<' is not a single token"),
        ("nllb", {"target_lang": "zho_Hxnt"}, "--target-lang 'zho_Hxnt' is not a language"),
    ],
)
def test_a_language_mistake_fails_before_the_run_folder(
    model_folders, pairs_file, tmp_path, family, setting, needle
):
    from workbench.core.train.run_training import run_training

    values = {**run_args(family), **setting}
    config = tiny_run_config(model_folders[family], pairs_file, tmp_path / "out", **values)
    with pytest.raises(WorkbenchError, match=needle):
        run_training(config)
    runs = tmp_path / "out" / "runs"
    assert not runs.exists() or not any(runs.iterdir())


@pytest.mark.parametrize(
    ("family", "length", "fits"),
    [
        ("marian", 512, True),
        ("marian", 513, False),
        ("nllb", 1024, True),
        ("nllb", 1025, False),
        ("t5", 4000, True),
    ],
)
def test_the_length_bound_is_the_models_own(
    model_folders, pairs_file, tmp_path, family, length, fits
):
    from workbench.core.train.run_model import check_run_model

    config = tiny_run_config(
        model_folders[family], pairs_file, tmp_path, max_source_length=length, **run_args(family)
    )
    if fits:
        check_run_model(config)
    else:
        with pytest.raises(WorkbenchError, match=f"max_source_length {length} is more than"):
            check_run_model(config)
