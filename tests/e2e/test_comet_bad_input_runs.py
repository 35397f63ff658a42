"""A COMET model that cannot be scored with is one line naming the value and the fix, and nothing
is written half: ``workbench score`` prints no report, ``train --comet`` makes no run folder.
Each bad model is a real file made from a fixture model: cut short, foreign, missing a weight,
of a class not implemented, with a missing encoder.

The tests that train (or build), split from tests/cli/test_comet_bad_input.py, whose other tests
do not.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.comet import (
    assert_one_line_error,
    break_class,
    copy_model,
)
from tests.helpers.runs import TINY_RUN_SETTINGS, tiny_toml


def test_train_refuses_a_bad_comet_model_before_any_run_folder(cli, tmp_path: Path):
    """--comet's model is read (hparams.yaml, the encoder's config) before training: a bad
    one costs one line and leaves no run behind."""
    model = copy_model(tmp_path)
    break_class(model)
    (tmp_path / "tiny.toml").write_text(tiny_toml(**TINY_RUN_SETTINGS), encoding="utf-8")
    out = tmp_path / "out"
    done = cli(
        "train", "--headless", "--preset", "demo", "--config", str(tmp_path / "tiny.toml"),
        "--output-dir", str(out), "--comet", str(model),
    )  # fmt: skip
    assert_one_line_error(done, "xCOMET")
    assert not (out / "runs").exists() or not any((out / "runs").iterdir())
