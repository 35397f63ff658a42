"""Checks before a run starts (workbench.core.train.preflight): a mistake leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.runs import tiny_config


def test_report_to_tensorboard_without_the_package_is_one_line(tmp_path: Path, monkeypatch):
    import importlib.util

    from workbench.core.train.run_training import run_training
    from workbench.errors import WorkbenchError

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tensorboard" else real(name, *a),
    )
    config = tiny_config(output_dir=str(tmp_path / "out"), report_to="tensorboard")
    with pytest.raises(WorkbenchError, match="pip install tensorboard"):
        run_training(config)
    assert not (tmp_path / "out").exists()
