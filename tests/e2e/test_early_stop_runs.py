"""Early stopping (``--early-stopping``): where it stops, what it says, resume and sweeps.

The tests that train (or build), split from tests/unit/test_early_stop.py, whose other tests do
not.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from tests.helpers.cli import TINY_DEMO_ARGS
from tests.helpers.runs import small, tiny_toml
from workbench.core.events import Note, TrainStep
from workbench.core.train.checkpoints import last_complete_checkpoint
from workbench.core.train.run_training import run_training

STILL = 1e-12  # a learning rate that leaves the tiny model's weights as they are


def test_a_30_epoch_run_with_patience_2_stops_after_epoch_3_and_says_so(
    cli, tmp_path: Path, hsk_pairs
):
    """The acceptance run, as a user types it, on a small file, with averaging on too."""
    (tmp_path / "tiny.toml").write_text(tiny_toml(learning_rate=STILL), encoding="utf-8")
    (tmp_path / "pairs.tsv").write_text(
        "en\tzh\n" + "".join(f"{p.source}\t{p.target}\n" for p in hsk_pairs[:150]),
        encoding="utf-8",
    )
    flags = ("--data", "pairs.tsv", "--epochs", "30", "--early-stopping", "2")
    result = cli(*TINY_DEMO_ARGS, *flags, "--average-checkpoints", "3", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert re.search(
        r"^  early stopping: validation BLEU has not risen for 2 epochs since epoch 1 "
        r"\(\d+\.\d\d\); stopped after epoch 3 of 30$",
        out,
        re.M,
    ), out
    assert "epoch 4" not in out
    # Averaging the 3 best of 3 equal checkpoints gains nothing: the best one is kept.
    assert re.search(
        r"^  averaging the 3 best checkpoints \(epochs 1, 2, 3\): validation BLEU "
        r"(\d+\.\d\d) → \1 \(\+0\.00, p = 1\.000\), chrF .*; the best checkpoint is kept",
        out,
        re.M,
    ), out
    (run,) = (tmp_path / "translation_output" / "runs").iterdir()
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["status"] == "finished"
    assert summary["early_stopping"] == {
        "patience": 2,
        "best_epoch": 1.0,
        "best_bleu": summary["epochs"][0]["eval_bleu"],
        "stopped_after_epoch": 3.0,
        "epochs_planned": 30.0,
        "stopped": True,
    }
    assert [e["epoch"] for e in summary["epochs"]] == [1.0, 2.0, 3.0]
    assert summary["best_checkpoint"].endswith("checkpoint-8")  # 8 steps an epoch
    averaging = summary["averaging"]
    assert averaging["kept"] == "best"
    assert averaging["epochs"] == [1.0, 2.0, 3.0]
    assert averaging["validation"]["best"] == averaging["validation"]["averaged"]
    # The report says both as the run did.
    assert cli("report", cwd=tmp_path).returncode == 0
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "| Early stopping | early stopping: validation BLEU has not risen for 2" in report
    assert "| Checkpoint averaging (validation) | averaging the 3 best checkpoints" in report
    assert "against the best checkpoint (epoch 1); the best checkpoint is kept" in report


def test_a_resumed_run_goes_on_counting_epochs_without_gain(tmp_path: Path):
    """Stopped during epoch 3 (one epoch without gain counted), resumed: it stops after
    epoch 3, as the run would have without the stop. A count started again at 0 would
    run to epoch 4. The checkpoints averaging needs survive the stop and the resume."""
    config = small(
        tmp_path,
        epochs=30.0,
        learning_rate=STILL,
        logging_steps=1,
        early_stopping=2,
        average_checkpoints=3,
        average="last",
    )
    stop = threading.Event()

    def stop_in_epoch_3(event):
        if isinstance(event, TrainStep) and event.step >= 20:  # 9 steps an epoch
            stop.set()

    first = run_training(config, stop_in_epoch_3, stop)
    assert first.status == "stopped"
    checkpoints = first.run_dir / "checkpoints"
    state = json.loads((checkpoints / "checkpoint-21" / "trainer_state.json").read_text())
    counted = state["stateful_callbacks"]["EarlyStoppingCallback"]
    assert counted["args"]["early_stopping_patience"] == 2
    assert counted["attributes"]["early_stopping_patience_counter"] == 1

    notes: list[str] = []
    second = run_training(
        config, lambda e: notes.append(e.text) if isinstance(e, Note) else None, resume=True
    )
    assert second.status == "finished"
    assert second.run_dir == first.run_dir
    assert second.summary.global_step == 27
    assert second.summary.early_stopping is not None
    assert second.summary.early_stopping.stopped_after_epoch == 3.0
    assert any(
        n.startswith("early stopping: validation BLEU has not risen for 2 epochs since epoch 1 ")
        and n.endswith("stopped after epoch 3 of 30")
        for n in notes
    ), notes
    # The stop's mid-epoch checkpoint is gone; the three epochs averaged are there.
    assert sorted(p.name for p in checkpoints.iterdir()) == [
        "checkpoint-18",
        "checkpoint-27",
        "checkpoint-9",
    ]
    assert second.summary.averaging is not None
    assert second.summary.averaging.checkpoints == [
        "checkpoint-9",
        "checkpoint-18",
        "checkpoint-27",
    ]
    # --resume still skips a checkpoint that is not whole for the one before it.
    (checkpoints / "checkpoint-27" / "optimizer.pt").unlink()
    assert last_complete_checkpoint(first.run_dir) == checkpoints / "checkpoint-18"


def test_a_sweep_trial_stops_early_too(tmp_path: Path):
    from workbench.core.experiments.sweep import make_plan, run_sweep
    from workbench.core.experiments.sweep.space import default_name, parse_space
    from workbench.core.run_folder.summary_file import read_summary

    base = small(tmp_path, epochs=30.0, learning_rate=STILL)
    space = parse_space(base, ["early_stopping=1"], [])
    result = run_sweep(make_plan(base, space, default_name(base, space)), lambda e: None)
    assert result.status == "finished"
    (trial,) = result.trials
    assert trial.run_dir is not None
    summary = read_summary(Path(trial.run_dir))
    assert trial.status == "finished"
    assert summary is not None
    assert summary.early_stopping is not None
    assert summary.early_stopping.stopped is True
    assert summary.early_stopping.stopped_after_epoch == 2.0
    assert summary.validation is not None
    assert trial.value == summary.validation.bleu_after
