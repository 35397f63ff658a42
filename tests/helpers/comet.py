"""The tiny COMET fixture models as a test uses them: copied, a setting changed, the one-line
refusal checked; the QE model and the history its scores are written to."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch
import yaml

from tests.helpers.paths import FIXTURES

COMET_FIXTURES = FIXTURES / "comet"


GOOD = COMET_FIXTURES / "regression-mix-sparsemax"


def copy_model(tmp_path: Path, name: str = "comet") -> Path:
    """A fixture model copied, its encoder beside it as its hparams.yaml expects."""
    shutil.copytree(COMET_FIXTURES / "encoder", tmp_path / "encoder", dirs_exist_ok=True)
    target = tmp_path / name
    shutil.copytree(GOOD, target)
    return target


def set_hparam(model: Path, **values: object) -> None:
    """Change settings in hparams.yaml and in the checkpoint's hyper_parameters alike."""
    path = model / "hparams.yaml"
    hparams = yaml.safe_load(path.read_text(encoding="utf-8"))
    hparams.update(values)
    path.write_text(yaml.safe_dump(hparams), encoding="utf-8")
    ckpt = model / "checkpoints" / "model.ckpt"
    data = torch.load(ckpt, map_location="cpu", weights_only=False)
    data["hyper_parameters"] = {**dict(data["hyper_parameters"]), **values}
    torch.save(data, ckpt)


def assert_one_line_error(done, *expected: str) -> str:
    """The CLI failed with one line (no traceback) that says each of ``expected``."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("workbench: error:")]
    assert len(lines) == 1, done.stderr
    for text in expected:
        assert text in lines[0], lines[0]
    assert done.stdout.strip() == "" or "scored" not in done.stdout  # no half report
    return lines[0]


def break_class(model: Path) -> None:
    set_hparam(model, class_identifier="xcomet_metric")


KIWI = FIXTURES / "comet" / "unified-kiwi"


def qe_records(history: Path) -> list[dict]:
    return [json.loads(line) for line in history.read_text(encoding="utf-8").splitlines()]
