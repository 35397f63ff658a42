"""The Trainer and what it is given (workbench.core.train.trainer, .recipe): evaluation order,
TensorBoard files.

The tests that train (or build), split from tests/unit/test_trainer.py, whose other tests do
not.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.runs import tiny_config


def test_report_to_tensorboard_writes_event_files(tmp_path: Path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from workbench.core.train.run_training import run_training

    config = tiny_config(
        samples=180,
        epochs=1.0,
        batch_size=16,
        logging_steps=1,
        output_dir=str(tmp_path / "out"),
        report_to="tensorboard",
    )
    result = run_training(config)
    events = EventAccumulator(str(result.run_dir / "tensorboard"))
    events.Reload()
    tags = events.Tags()["scalars"]
    assert "train/loss" in tags
    assert "eval/bleu" in tags
    assert len(events.Scalars("train/loss")) == 9
