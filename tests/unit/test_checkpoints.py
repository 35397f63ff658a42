"""Checkpoints and the published model (workbench.core.train.checkpoints): only whole ones count."""

from __future__ import annotations

from pathlib import Path

from workbench.core.events import Event, Note
from workbench.core.train.checkpoints import last_complete_checkpoint, publish_model


def test_incomplete_checkpoint_is_skipped(tmp_path: Path):
    run = tmp_path / "run"
    good = run / "checkpoints" / "checkpoint-4"
    bad = run / "checkpoints" / "checkpoint-8"
    for folder in (good, bad):
        folder.mkdir(parents=True)
    for name in ("model.safetensors", "trainer_state.json", "optimizer.pt"):
        (good / name).write_text("x")
    (bad / "trainer_state.json").write_text("x")  # killed mid-save: no weights
    notes: list[Event] = []
    assert last_complete_checkpoint(run, notes.append) == good
    assert isinstance(notes[0], Note)
    assert "checkpoint-8" in notes[0].text


def test_publish_model_replaces_atomically(tmp_path: Path):
    src = tmp_path / "new"
    src.mkdir()
    (src / "config.json").write_text("new")
    dest = tmp_path / "best_model"
    dest.mkdir()
    (dest / "config.json").write_text("old")
    publish_model(src, dest)
    assert (dest / "config.json").read_text() == "new"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
