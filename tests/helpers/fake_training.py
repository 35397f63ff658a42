"""A stand-in for ``run_training`` in the sweep's tests and the CLI's contract tests: a
run folder in milliseconds.

The sweep's protocol (claiming points, heartbeats, a trial cut short and taken up again,
the best trial published) is about trials and run folders; a real tiny run costs seconds
per trial and a minute or two per test. ``fake_run_training`` keeps the part of
run_training's contract that a sweep relies on:

- an empty ``run_dir`` gets a new run: config.json, then a complete checkpoint;
- a ``run_dir`` with a config.json is continued with the settings it was started with;
- ``stop`` set while it "trains" ends the run ``stopped`` (its summary says so), the
  checkpoint kept;
- a finished run has a recorded tiny run's metrics, test translations and scores, its own
  ``best_model/`` (published to the output folder unless ``publish=False``, as a sweep
  asks), a validation BLEU made up from its settings (so trials differ), and says so
  with a ``RunDone`` event;
- with a ``lease`` (the sweep's own, real one), every write waits for ``holds(lease)``,
  as run_training's do, and a run that lost it returns ``lost`` with nothing more written.

A new run "trains" in steps of STEP_SECONDS for ``FAKE_TRAINING_SECONDS`` (an environment
variable; 0 when unset) and, when ``FAKE_TRAINING_HOLD`` names a file, until that file
exists: long enough for a test to signal, pause or kill the worker process in the middle
of a trial. Each step is a write: one line in the run folder's ``fake_writes.jsonl``,
which names the writing process, as every other write of the stand-in does, so a test
can tell the writers of a folder apart.
``python -m tests.helpers.fake_training ARGS`` is ``python -m workbench ARGS`` with the stand-in in
place: a real worker process, real signals and a real study, no training. One real sweep
(tests/e2e/test_sweep_runs.py, two workers) still trains.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

from tests.fixtures.record_tiny_run import RUN_NAMES, RUNS_TARGET
from workbench.core.atomic import write_json
from workbench.core.config.run_config import RunConfig
from workbench.core.events import EventSink, RunDone
from workbench.core.live.lease import RunLease, holds
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.layout import OutputFolder, RunFolder
from workbench.core.run_folder.output_folder import new_run_dir
from workbench.core.run_folder.saved_config import SavedConfig, saved_config, write_saved_config
from workbench.core.run_folder.summary_file import write_summary
from workbench.core.train.run_training import LOST, RunResult

#: The recorded run whose files every fake run has.
RECORDED = RUNS_TARGET / RUN_NAMES[0]
#: The environment variable with the seconds a new fake run "trains".
SECONDS_VARIABLE = "FAKE_TRAINING_SECONDS"
#: The environment variable naming a file: a new fake run "trains" until it exists.
HOLD_VARIABLE = "FAKE_TRAINING_HOLD"
#: One "training step".
STEP_SECONDS = 0.1
#: Every write of a fake run, one JSON line each: ``{"pid": ..., "wrote": ...}``.
WRITES_FILE = "fake_writes.jsonl"


def made_up_validation_bleu(config: RunConfig) -> float:
    """A validation BLEU that grows with the epochs and the learning rate: each point of a
    sweep's grid or search gets its own value, and the best trial is never a tie."""
    return round(config.epochs + 1000 * config.learning_rate, 2)


def fake_run_training(
    config: RunConfig,
    on_event: EventSink | None = None,
    stop: threading.Event | None = None,
    resume: bool = False,
    run_dir: Path | None = None,
    publish: bool = True,
    lease: RunLease | None = None,
) -> RunResult:
    """What ``run_training(config, on_event, stop, run_dir=..., publish=False, lease=...)``
    leaves for a sweep, without training (see the module docstring)."""
    assert not resume, "a sweep passes run_dir, and the CLI's contract tests start anew"
    stop = stop or threading.Event()
    run_dir = run_dir or new_run_dir(Path(config.output_dir).expanduser(), config.preset)
    folder = RunFolder(run_dir)
    checkpoint = folder.checkpoints / "checkpoint-1"
    step = 1

    def lost() -> RunResult:  # as run_training's: no summary written
        return RunResult(LOST, run_dir, RunSummary(run_dir=str(run_dir), global_step=step))

    def may_write(what: str) -> bool:
        if not holds(lease):
            return False
        with (run_dir / WRITES_FILE).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"pid": os.getpid(), "wrote": what}) + "\n")
        return True

    if folder.config.is_file():  # continued, as run_training continues it
        config = saved_config(run_dir, config.preset)
        assert (checkpoint / "optimizer.pt").is_file(), "continued without a checkpoint"
        if not may_write("continued"):
            return lost()
    else:
        if not may_write("config.json, checkpoint-1"):
            return lost()
        write_saved_config(run_dir, SavedConfig(config.to_dict()))
        checkpoint.mkdir(parents=True)
        for name in ("model.safetensors", "optimizer.pt"):
            (checkpoint / name).write_bytes(b"")
        (checkpoint / "trainer_state.json").write_text("{}", encoding="utf-8")
        until = time.monotonic() + float(os.environ.get(SECONDS_VARIABLE) or 0)
        hold = os.environ.get(HOLD_VARIABLE)
        while not stop.is_set() and (
            time.monotonic() < until or (hold is not None and not Path(hold).exists())
        ):
            stop.wait(STEP_SECONDS)
            step += 1
            if not may_write(f"step {step}"):
                return lost()
    if not may_write("summary"):
        return lost()
    if stop.is_set():
        summary = RunSummary(status="stopped", preset=config.preset, run_dir=str(run_dir))
        write_summary(run_dir, summary)
        return RunResult("stopped", run_dir, summary)

    recorded_run = RunFolder(RECORDED)
    shutil.copyfile(recorded_run.metrics, folder.metrics)
    shutil.copyfile(recorded_run.translations("test"), folder.translations("test"))
    best_dir = folder.best_model
    best_dir.mkdir(exist_ok=True)
    write_json(best_dir / "workbench.json", {"run_dir": str(run_dir)})
    recorded = json.loads(recorded_run.summary.read_text(encoding="utf-8"))
    recorded["validation"]["bleu_after"] = made_up_validation_bleu(config)
    published = best_dir
    if publish:  # as run_training publishes it: the output folder's best_model/
        published = OutputFolder(Path(config.output_dir)).best_model
        shutil.copytree(best_dir, published, dirs_exist_ok=True)
    summary = RunSummary.from_dict(
        {
            **recorded,
            "run_dir": str(run_dir),
            "best_model": str(published),
            "run_best_model": str(best_dir),
        }
    )
    write_summary(run_dir, summary)
    if on_event is not None:
        on_event(RunDone("finished", str(run_dir), summary))
    return RunResult("finished", run_dir, summary)


def main(argv: list[str]) -> int:
    """``workbench`` with :func:`fake_run_training` in place of ``run_training``."""
    from workbench.cli import main as workbench_main
    from workbench.core.train import run_training as training_module

    # The sweep imports run_training from its module when a trial starts: it finds this.
    training_module.run_training = fake_run_training
    return workbench_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
