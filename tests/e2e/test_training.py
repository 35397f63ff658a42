"""The core run in-process: events, stop at a step with a checkpoint, resume, outputs."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest

from tests.helpers.runs import FinishedRun, small
from workbench.core.evaluate.metrics import sentence_chrf
from workbench.core.events import EvalDone, Note, Phase, RunDone, Sample, TrainStep
from workbench.core.records.files import read_jsonl
from workbench.core.train.checkpoints import last_complete_checkpoint
from workbench.core.train.run_training import run_training


def test_events_and_outputs(finished_run: FinishedRun):
    result, events, handed = finished_run.result, finished_run.events, finished_run.handed
    assert result.status == "finished"
    test_sources = {
        json.loads(line)["source"]
        for line in (result.run_dir / "test_translations.jsonl").read_text().splitlines()
    }
    assert len(test_sources) == 18
    seen_by_trainer = {p.source for p in handed["train"] + handed["validation"]}
    assert len(seen_by_trainer) == 162
    assert not seen_by_trainer & test_sources
    kinds = [type(e).__name__ for e in events]
    phases = [e.name for e in events if isinstance(e, Phase)]
    assert phases == ["data", "model", "before", "before", "train", "after", "after"]
    steps = [e for e in events if isinstance(e, TrainStep)]
    assert steps
    assert all(s.max_steps == 18 for s in steps)  # 144 pairs / 16 = 9 steps x 2
    assert all(s.samples_per_second and s.samples_per_second > 0 for s in steps[1:])
    evals = [e for e in events if isinstance(e, EvalDone)]
    assert [(e.stage, e.split) for e in evals] == [
        ("before", "validation"),
        ("before", "test"),
        ("epoch", "validation"),
        ("epoch", "validation"),
        ("after", "validation"),
        ("after", "test"),
    ]
    assert sum(isinstance(e, Sample) for e in events) == 5
    assert kinds[-1] == "RunDone"
    summary = json.loads((result.run_dir / "summary.json").read_text())
    for role, before, after in (("validation", evals[0], evals[-2]), ("test", evals[1], evals[-1])):
        block = summary[role]
        assert block["role"] == role
        assert block["size"] == 18
        assert block["name"]
        assert block["bleu_before"] == pytest.approx(before.bleu, abs=0.01)
        assert block["bleu_after"] == pytest.approx(after.bleu, abs=0.01)
        assert block["chrf_after"] == pytest.approx(after.chrf, abs=0.01)
        for key in (
            "bleu_before_ci",
            "bleu_after_ci",
            "chrf_before_ci",
            "chrf_after_ci",
            "bleu_delta_ci",
            "chrf_delta_ci",
        ):
            low, high = block[key]
            assert low <= high
        assert 0 < block["bleu_p"] <= 1
        assert 0 < block["chrf_p"] <= 1
    assert summary["precision"] == {
        "device": "cpu",
        "training": "fp32",
        "training_tf32": False,
        "decoding": "fp32, TF32 off",
    }
    config = json.loads((result.run_dir / "config.json").read_text())
    assert config["precision"] == summary["precision"]
    test_rows = [
        json.loads(line)
        for line in (result.run_dir / "test_translations.jsonl").read_text().splitlines()
    ]
    assert [s["source"] for s in summary["samples"]] == [r["source"] for r in test_rows[::3]][
        :5
    ]  # the five samples are test sentences
    assert (Path(summary["best_model"]) / "workbench.json").is_file()


def test_a_finished_run_records_where_its_gain_comes_from(finished_run: FinishedRun):
    """summary.json's by_length and most_changed are the test set's, scored as the
    headline is: HSK sentences are short, so one bucket holds all 18 with its numbers."""
    run_dir = finished_run.result.run_dir
    summary = json.loads((run_dir / "summary.json").read_text())
    (bucket,) = summary["by_length"]
    assert (bucket["unit"], bucket["low"], bucket["high"], bucket["sentences"]) == (
        "words",
        1,
        10,
        18,
    )
    for key in ("bleu_before", "bleu_after", "chrf_before", "chrf_after"):
        assert bucket[key] == summary["test"][key]
    rows = read_jsonl(run_dir / "test_translations.jsonl")
    for row in rows:
        assert row["chrf_after"] == round(sentence_chrf(row["after"], row["reference"]), 2)
    changes = sorted(round(r["chrf_after"] - r["chrf_before"], 2) for r in rows)
    rose, fell = summary["most_changed"]["rose"], summary["most_changed"]["fell"]
    assert [c["change"] for c in rose] == [c for c in reversed(changes) if c > 0][:5]
    assert [c["change"] for c in fell] == [c for c in changes if c < 0][:5]


def test_stop_event_ends_at_a_step_with_a_checkpoint_then_resume(tmp_path: Path):
    stop = threading.Event()
    seen: list[int] = []

    def sink(event):
        if isinstance(event, TrainStep):
            seen.append(event.step)
            if event.step >= 4:
                stop.set()

    config = small(tmp_path)
    first = run_training(config, sink, stop)
    assert first.status == "stopped"
    ckpt = last_complete_checkpoint(first.run_dir)
    assert ckpt is not None
    assert ckpt.name == "checkpoint-5"  # the step after the flag
    assert json.loads((first.run_dir / "summary.json").read_text())["status"] == "stopped"

    done: list[RunDone] = []
    second = run_training(
        config, lambda e: done.append(e) if isinstance(e, RunDone) else None, resume=True
    )
    assert second.status == "finished"
    assert second.run_dir == first.run_dir
    assert done[-1].summary.global_step == 18


def test_a_second_run_never_touches_the_first_and_best_model_follows_the_newer(
    finished_run: FinishedRun, tmp_path: Path
):
    first_dir = finished_run.copy_to(tmp_path / "out")  # the first run, finished here
    kept = {p: p.read_bytes() for p in first_dir.rglob("*") if p.is_file()}
    second = run_training(small(tmp_path, epochs=1.0))
    assert second.run_dir != first_dir
    assert sorted(p.name for p in (tmp_path / "out" / "runs").iterdir()) == sorted(
        [first_dir.name, second.run_dir.name]
    )
    assert {p: p.read_bytes() for p in first_dir.rglob("*") if p.is_file()} == kept
    published = json.loads((tmp_path / "out" / "best_model" / "workbench.json").read_text())
    assert published["run_dir"] == str(second.run_dir)
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".")]


def test_a_run_folder_given_as_run_dir_is_continued_from_its_last_checkpoint(
    finished_run: FinishedRun, tmp_path: Path
):
    """How a sweep continues a trial cut short (tests/unit/test_sweep.py runs its trials on a
    stand-in): ``run_dir`` with a config.json goes on from its checkpoint, in that folder."""
    run = finished_run.copy_to(tmp_path / "out")
    # As a kill during epoch 2 leaves it: epoch 1's checkpoint, no summary, no best model.
    for folder in (run / "checkpoints" / "checkpoint-18", run / "best_model"):
        shutil.rmtree(folder)
    (run / "summary.json").unlink()
    notes: list[str] = []
    result = run_training(
        small(tmp_path, epochs=5.0),  # the run's own settings win
        lambda e: notes.append(e.text) if isinstance(e, Note) else None,
        run_dir=run,
        publish=False,
    )
    assert result.status == "finished"
    assert result.run_dir == run
    assert f"resuming {run.name} from checkpoint-9" in notes
    assert result.summary.global_step == 18
    assert [p.name for p in (tmp_path / "out" / "runs").iterdir()] == [run.name]
    # publish=False: the run names its own model, not <output>/best_model.
    assert result.summary.best_model == result.summary.run_best_model == str(run / "best_model")


def test_after_is_decoded_like_translate_even_with_bf16_autocast_in_training(cli, tmp_path: Path):
    """bf16 autocast during training (accelerate's, on CPU here) must not reach "after":
    it is decoded by the saved best model, exactly as `workbench translate` decodes it."""
    result = run_training(small(tmp_path, bf16=True))
    assert result.status == "finished"
    assert result.summary.precision is not None
    assert result.summary.precision.training == "bf16"
    rows = [
        json.loads(line)
        for line in (result.run_dir / "test_translations.jsonl").read_text().splitlines()
    ]
    printed = cli(
        "translate",
        "--model",
        str(result.run_dir / "best_model"),
        input="".join(r["source"] + "\n" for r in rows),
    )
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.splitlines() == [r["after"] for r in rows]
