"""Faults injected for real: stop and resume, signals, kill -9, NaN, a full disk."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import tiny_config
from workbench.core.events import Note, TrainStep
from workbench.core.training import last_complete_checkpoint, publish_model, run_training
from workbench.errors import WorkbenchError


def small(tmp_path: Path, name: str = "out", **extra):
    values = dict(samples=160, epochs=2.0, batch_size=16, logging_steps=2,
                  learning_rate=3e-3, output_dir=str(tmp_path / name))
    values.update(extra)
    return tiny_config(**values)


def test_stop_then_resume_continues_the_same_run(tmp_path: Path):
    """Stop at a step, resume: same steps, same batches, the same curve within noise.

    Not yet bitwise: the resumed DataLoader draws its worker seed from the global RNG
    after the checkpoint's RNG state is restored, which shifts dropout by one draw.
    """
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
    assert last_complete_checkpoint(stopped.run_dir).name == "checkpoint-7"
    resumed = run_training(small(tmp_path, "b", logging_steps=1), losses(log), resume=True)
    assert resumed.status == "finished" and resumed.run_dir == stopped.run_dir
    assert [s for s, _ in log] == [s for s, _ in straight_log] == list(range(1, 19))
    assert log[:7] == straight_log[:7]  # identical up to the checkpoint
    for (_, a), (_, b) in zip(straight_log[7:], log[7:], strict=True):
        assert abs(a - b) / a < 0.01
    assert resumed.summary["global_step"] == straight.summary["global_step"] == 18


def test_nan_loss_stops_the_run_and_names_the_step(tmp_path: Path, monkeypatch):
    from transformers import Seq2SeqTrainer

    original = Seq2SeqTrainer.compute_loss
    calls = {"n": 0}

    def poisoned(self, model, inputs, *args, **kwargs):
        calls["n"] += 1
        loss = original(self, model, inputs, *args, **kwargs)
        if calls["n"] == 3:
            loss = loss * float("nan")
        return loss

    monkeypatch.setattr(Seq2SeqTrainer, "compute_loss", poisoned)
    notes: list[Note] = []
    steps: list[TrainStep] = []
    result = run_training(small(tmp_path),
                          lambda e: notes.append(e) if isinstance(e, Note) else
                          steps.append(e) if isinstance(e, TrainStep) else None)
    assert result.status == "failed"
    errors = [n for n in notes if n.level == "error"]
    assert len(errors) == 1 and "at step 4" in errors[0].text  # step 3's NaN, logged at 4
    assert all(s.loss is None or s.loss == s.loss for s in steps)  # never a NaN, never 0.0
    assert not any(s.loss == 0.0 for s in steps)
    assert json.loads((result.run_dir / "summary.json").read_text())["status"] == "failed"


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
    with pytest.raises(OSError):
        publish_model(new, old)
    assert (old / "config.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best_model", "new"]


def test_output_dir_that_cannot_be_written(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(WorkbenchError, match="not writable"):
        run_training(small(tmp_path, "file/out"))


TINY_TOML = """
samples = 160
epochs = 30
learning_rate = 3e-3
batch_size = 16
logging_steps = 1
scratch_d_model = 32
scratch_layers = 1
scratch_heads = 2
scratch_ffn_dim = 64
scratch_source_vocab = 400
scratch_target_vocab = 2000
max_new_tokens = 16
"""


def start_run(work: Path) -> subprocess.Popen:
    (work / "tiny.toml").write_text(TINY_TOML, encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", "train", "--headless", "--preset", "demo",
         "--config", "tiny.toml", "--no-interact"],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def wait_for_line(proc: subprocess.Popen, pattern: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    for line in proc.stdout:
        if re.search(pattern, line):
            return
        if time.monotonic() > deadline:
            break
    raise AssertionError(f"never saw {pattern!r}")


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


def test_kill_9_then_resume_finishes(tmp_path: Path):
    proc = start_run(tmp_path)
    wait_for_line(proc, "epoch 2 done")  # at least one epoch checkpoint exists
    proc.kill()
    proc.wait(timeout=30)
    run = next((tmp_path / "translation_output" / "runs").iterdir())
    ckpt = last_complete_checkpoint(run)
    assert ckpt is not None
    # A half-written later checkpoint, as a kill during save leaves it, is skipped.
    broken = ckpt.parent / f"checkpoint-{int(ckpt.name.split('-')[1]) + 1000}"
    broken.mkdir()
    (broken / "trainer_state.json").write_text("{")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    resumed = subprocess.run(
        [sys.executable, "-m", "workbench", "train", "--headless", "--preset", "demo",
         "--resume", "--no-interact"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"skipping incomplete checkpoint {broken.name}" in resumed.stdout
    assert f"resuming {run.name} from {ckpt.name}" in resumed.stdout
    assert json.loads((run / "summary.json").read_text())["status"] == "finished"
