"""Faults injected for real: stop and resume, signals, kill -9, NaN, a full disk."""

from __future__ import annotations

import errno
import json
import signal
import threading
from pathlib import Path

import pytest

from tests.helpers.cli import TINY_DEMO_ARGS, Started, start_cli
from tests.helpers.processes import same_weights, wait_for_line
from tests.helpers.runs import small, tiny_toml
from workbench.core.events import EvalDone, Event, Note, TrainStep
from workbench.core.live.follow import MetricsFollower
from workbench.core.train.checkpoints import last_complete_checkpoint
from workbench.core.train.run_training import run_training
from workbench.errors import WorkbenchError


def test_stop_then_resume_equals_an_uninterrupted_run_bit_for_bit(tmp_path: Path):
    """Stop mid-epoch, resume: the same steps, losses, weights and BLEU as one straight run."""

    def losses(into: list):
        return lambda e: into.append((e.step, e.loss)) if isinstance(e, TrainStep) else None

    straight_log: list = []
    straight = run_training(small(tmp_path, "a", logging_steps=1), losses(straight_log))
    stop = threading.Event()
    log: list = []

    def stop_at_6(event):
        losses(log)(event)
        if isinstance(event, TrainStep) and event.step >= 6:
            stop.set()

    stopped = run_training(small(tmp_path, "b", logging_steps=1), stop_at_6, stop)
    assert stopped.status == "stopped"
    checkpoint = last_complete_checkpoint(stopped.run_dir)
    assert checkpoint is not None
    assert checkpoint.name == "checkpoint-7"  # mid-epoch 1
    resumed = run_training(small(tmp_path, "b", logging_steps=1), losses(log), resume=True)
    assert resumed.status == "finished"
    assert resumed.run_dir == stopped.run_dir
    assert [s for s, _ in log] == [s for s, _ in straight_log] == list(range(1, 19))
    assert log == straight_log  # every loss equal, not just close
    for key in ("global_step", "test", "validation"):
        assert getattr(resumed.summary, key) == getattr(straight.summary, key), key

    def evals(summary):
        return [(e.step, e.eval_loss, e.eval_bleu) for e in summary.epochs]

    assert evals(resumed.summary) == evals(straight.summary)  # no extra evaluation at the stop
    assert same_weights(resumed.run_dir / "best_model", straight.run_dir / "best_model")


def poison_loss(monkeypatch, at_call: int) -> None:
    """Make the loss of the ``at_call``-th training step NaN, as a diverging run does.

    Training losses come from ``token_loss.real_token_loss`` (Marian) or the Trainer's own
    ``compute_loss`` (anything else); both are poisoned, on one count of training steps.
    """
    from transformers import Seq2SeqTrainer

    from workbench.core.train import loss as token_loss

    calls = {"n": 0}

    def poisoned(original, training_of):
        def wrapper(*args, **kwargs):
            loss = original(*args, **kwargs)
            if training_of(*args).training:
                calls["n"] += 1
                if calls["n"] == at_call:
                    loss = loss * float("nan")
            return loss

        return wrapper

    monkeypatch.setattr(
        Seq2SeqTrainer,
        "compute_loss",
        poisoned(Seq2SeqTrainer.compute_loss, lambda _self, model, *a: model),
    )
    monkeypatch.setattr(
        token_loss,
        "real_token_loss",
        poisoned(token_loss.real_token_loss, lambda wrapped, *a: wrapped),
    )


def collect(notes: list, steps: list):
    return lambda e: (
        notes.append(e)
        if isinstance(e, Note)
        else (steps.append(e) if isinstance(e, TrainStep) else None)
    )


def test_nan_loss_stops_the_run_names_the_step_and_keeps_the_best_model(tmp_path, monkeypatch):
    poison_loss(monkeypatch, at_call=12)  # in epoch 2, after epoch 1 was evaluated and saved
    notes: list[Note] = []
    steps: list[TrainStep] = []
    result = run_training(small(tmp_path, logging_steps=1), collect(notes, steps))
    assert result.status == "failed"
    errors = [n for n in notes if n.level == "error"]
    assert len(errors) == 1
    assert "at step 12" in errors[0].text
    assert [s.loss for s in steps if s.step == 12] == [None]  # never logged as 0.0 or NaN
    assert all(s.loss is not None and s.loss > 0 for s in steps if s.step != 12)
    assert max(s.step for s in steps) == 12  # stopped at once
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert "step 12" in summary["error"]
    kept = result.run_dir / "best_model"
    assert summary["run_best_model"] == str(kept)
    assert any(f"best model so far kept in {kept}" in n.text for n in notes)
    from workbench.core.translate.translator import Translator

    translator = Translator.from_pretrained(str(kept))  # loads, and its weights are finite
    assert all(bool(p.isfinite().all()) for p in translator.model.parameters())
    assert not (tmp_path / "out" / "best_model").exists()  # a failed run publishes nothing
    # the NaN model was neither evaluated nor saved as a checkpoint
    assert [c.name for c in (result.run_dir / "checkpoints").glob("checkpoint-*")] == [
        "checkpoint-9"
    ]


class LeaseTakenAt:
    """A run folder's lease (``RunLease``) that another worker takes as the run sends the
    event ``taken_at`` picks: what a sweep's trial sees when it is taken for dead."""

    seen: list[Event]

    def __init__(self, taken_at) -> None:
        self.taken_at, self.taken, self.seen = taken_at, False, []

    def held(self) -> bool:
        return not self.taken

    def on_event(self, event) -> None:
        self.seen.append(event)
        self.taken = self.taken or self.taken_at(event)


@pytest.mark.parametrize(
    ("taken_at", "checkpoints", "last_step"),
    [
        # in epoch 2, after epoch 1's checkpoint: the next step stops the run
        (lambda e: isinstance(e, TrainStep) and e.step == 12, ["checkpoint-9"], 12),
        # while epoch 1 is evaluated: its checkpoint is not saved
        (lambda e: isinstance(e, EvalDone) and e.stage == "epoch", [], 9),
    ],
    ids=["at-a-step", "at-an-evaluation"],
)
def test_a_run_that_lost_its_lease_writes_nothing_more(
    tmp_path: Path, taken_at, checkpoints, last_step
):
    lease = LeaseTakenAt(taken_at)
    result = run_training(small(tmp_path, logging_steps=1), lease.on_event, lease=lease)
    assert result.status == "lost"
    assert result.summary.global_step == last_step + 1
    run = result.run_dir
    assert [c.name for c in (run / "checkpoints").glob("checkpoint-*")] == checkpoints
    assert not list((run / "checkpoints").glob(".staging-*/checkpoint-*/*.safetensors"))
    for name in ("summary.json", "best_model", "test_translations.jsonl"):
        assert not (run / name).exists(), name
    assert not (tmp_path / "out" / "best_model").exists()
    taken = next(i for i, event in enumerate(lease.seen) if taken_at(event))
    assert lease.seen[taken + 1 :] == []  # not a line more, on screen or in metrics.jsonl
    assert MetricsFollower(run / "metrics.jsonl").read_new()[-1] == lease.seen[taken]
    assert max(e.step for e in lease.seen if isinstance(e, TrainStep)) == last_step


def test_a_run_that_lost_its_lease_before_training_stops_before_the_model(tmp_path: Path):
    """Lost while the run writes its first lines: the check before the model raises
    LeaseLost, which the run turns into ``lost`` with no step and nothing more written."""
    lease = LeaseTakenAt(lambda e: isinstance(e, Note))
    result = run_training(small(tmp_path), lease.on_event, lease=lease)
    assert result.status == "lost"
    assert result.summary.global_step is None
    assert not (result.run_dir / "summary.json").exists()
    taken = next(i for i, event in enumerate(lease.seen) if isinstance(event, Note))
    assert all(isinstance(e, Note) for e in lease.seen[taken:])  # no model phase, no step


def test_nan_loss_before_any_evaluation_says_nothing_was_kept(tmp_path, monkeypatch):
    poison_loss(monkeypatch, at_call=3)
    notes: list[Note] = []
    result = run_training(small(tmp_path, logging_steps=1), collect(notes, []))
    assert result.status == "failed"
    assert any("loss became nan at step 3" in n.text for n in notes)
    assert any("no best model to keep" in n.text for n in notes)
    assert not (result.run_dir / "best_model").exists()


def test_full_disk_while_saving_a_checkpoint_keeps_the_last_one_resumable(
    tmp_path: Path, monkeypatch
):
    import torch

    real_save = torch.save
    saves = {"n": 0}

    def failing_save(obj, f, *args, **kwargs):
        if str(f).endswith("optimizer.pt"):
            saves["n"] += 1
            if saves["n"] == 2:  # epoch 2's checkpoint: the disk fills up part-way
                raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(obj, f, *args, **kwargs)

    monkeypatch.setattr(torch, "save", failing_save)
    with pytest.raises(WorkbenchError, match=r"No space left on device.*workbench train --resume"):
        run_training(small(tmp_path, epochs=3.0))
    run = next((tmp_path / "out" / "runs").iterdir())
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["checkpoint-9"]
    checkpoint = last_complete_checkpoint(run)
    assert checkpoint is not None
    assert checkpoint.name == "checkpoint-9"
    monkeypatch.setattr(torch, "save", real_save)
    resumed = run_training(small(tmp_path, epochs=3.0), resume=True)
    assert resumed.status == "finished"
    assert resumed.run_dir == run


TINY_TOML = tiny_toml(epochs=3)


def start_run(work: Path) -> Started:
    """The tiny demo run in a process of its own, for a test that signals or kills it."""
    (work / "tiny.toml").write_text(TINY_TOML, encoding="utf-8")
    return start_cli(*TINY_DEMO_ARGS, cwd=work)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_with_a_resumable_checkpoint(tmp_path: Path, sig):
    proc = start_run(tmp_path)
    wait_for_line(proc, r"step +3/")
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "continue with: workbench train --resume" in out
    run = next((tmp_path / "translation_output" / "runs").iterdir())
    assert last_complete_checkpoint(run) is not None


def test_kill_9_then_resume_matches_an_uninterrupted_run(cli, tmp_path: Path):
    killed = tmp_path / "killed"
    killed.mkdir()
    proc = start_run(killed)
    wait_for_line(proc, "epoch 2 done")  # epoch 1's checkpoint is complete by now
    proc.kill()
    proc.wait(timeout=30)
    run = next((killed / "translation_output" / "runs").iterdir())
    ckpt = last_complete_checkpoint(run)
    assert ckpt is not None
    # A half-written later checkpoint, as a kill during an in-place save would leave it,
    # is skipped with a warning.
    broken = ckpt.parent / f"checkpoint-{int(ckpt.name.split('-')[1]) + 1000}"
    broken.mkdir()
    (broken / "trainer_state.json").write_text("{")
    resumed = cli(*TINY_DEMO_ARGS, "--resume", cwd=killed)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"skipping incomplete checkpoint {broken.name}" in resumed.stdout
    assert f"resuming {run.name} from {ckpt.name}" in resumed.stdout

    straight_dir = tmp_path / "straight"
    straight_dir.mkdir()
    (straight_dir / "tiny.toml").write_text(TINY_TOML, encoding="utf-8")
    assert cli(*TINY_DEMO_ARGS, cwd=straight_dir).returncode == 0
    straight = next((straight_dir / "translation_output" / "runs").iterdir())
    got = json.loads((run / "summary.json").read_text())
    want = json.loads((straight / "summary.json").read_text())
    assert got["status"] == want["status"] == "finished"
    for key in ("global_step", "test", "validation"):
        assert got[key] == want[key], key
    assert Path(got["best_checkpoint"]).name == Path(want["best_checkpoint"]).name
    assert same_weights(run / "best_model", straight / "best_model")
