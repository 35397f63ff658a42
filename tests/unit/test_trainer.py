"""The Trainer and its parts (workbench.core.train.trainer): evaluation order, TensorBoard files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.runs import tiny_config


@pytest.mark.slow
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


def test_evaluation_set_is_longest_first_with_references_still_paired():
    import datasets

    from workbench.core.train.trainer import longest_first

    dataset = datasets.Dataset.from_dict(
        {"input_ids": [[1] * 3, [2] * 5, [3] * 1, [4] * 5], "labels": [[1], [2], [3], [4]]}
    )
    ordered, refs = longest_first(dataset, ["three", "five-a", "one", "five-b"])
    assert [len(ids) for ids in ordered["input_ids"]] == [5, 5, 3, 1]
    assert refs == ["five-a", "five-b", "three", "one"]  # ties keep their order
    assert [row[0] for row in ordered["labels"]] == [2, 4, 1, 3]
