"""Faults on the disk that need no training: a full disk while the best model is published
keeps the previous one, and an output folder that cannot be written is refused as such.

Split from tests/e2e/test_faults.py, whose faults (stop and resume, signals, kill -9, NaN, a
full disk mid-run) each train a run.
"""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import pytest

from tests.helpers.runs import small
from workbench.core.train.checkpoints import publish_model
from workbench.core.train.run_training import run_training
from workbench.errors import WorkbenchError


def test_full_disk_while_publishing_keeps_the_previous_best_model(tmp_path: Path, monkeypatch):
    old = tmp_path / "best_model"
    old.mkdir()
    (old / "config.json").write_text("old")
    new = tmp_path / "new"
    new.mkdir()
    for i in range(5):
        (new / f"part{i}.bin").write_text("x" * 10)
    real_copy = shutil.copyfile
    copied = {"n": 0}

    def failing_copy(src, dst, *a, **k):
        copied["n"] += 1
        if copied["n"] == 3:  # the disk fills up on the third file
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_copy(src, dst, *a, **k)

    monkeypatch.setattr(shutil, "copyfile", failing_copy)
    with pytest.raises(OSError, match="No space left on device"):
        publish_model(new, old)
    assert (old / "config.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best_model", "new"]


def test_output_dir_that_cannot_be_written(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(WorkbenchError, match="not writable"):
        run_training(small(tmp_path, "file/out"))
