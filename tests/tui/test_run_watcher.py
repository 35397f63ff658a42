"""The Training pane's work without Textual (workbench.tui.run_watcher.RunWatcher): each
source of the run it shows, driven as the pane drives it, no app running.

Replays read the recorded tiny runs; an attached run is written by a real RunWriter this
process holds; a detached start runs a real ``workbench train`` process, which refuses
at once; a local run trains the stand-in trainer (tests/helpers/fake_training.py) on a
thread, as the pane's worker does (the real one trains in tests/e2e/test_tui_training.py).
"""

from __future__ import annotations

import dataclasses
import io
import shutil
import threading
import time
from pathlib import Path

import pytest

from tests.fixtures.record_tiny_run import RUN_NAMES, RUNS_TARGET
from tests.helpers.fake_training import SECONDS_VARIABLE, fake_run_training
from tests.helpers.runs import small
from workbench.cli.headless import HeadlessPrinter
from workbench.core.atomic import write_json
from workbench.core.events import (
    EvalDone,
    Event,
    JsonlRecorder,
    Phase,
    RunDone,
    TrainStep,
)
from workbench.core.live.follow import MetricsFollower
from workbench.core.live.writer import RunWriter
from workbench.core.run_folder.layout import RunFolder
from workbench.core.run_folder.output_folder import new_run_dir
from workbench.core.run_folder.summary_file import read_summary
from workbench.errors import WorkbenchError
from workbench.tui.run_watcher import RunWatcher

RECORDED = RUNS_TARGET / RUN_NAMES[0]


def recorded_run(tmp_path: Path) -> Path:
    """A copy of a recorded finished run (its config.json says 6 epochs), no train.log."""
    run = tmp_path / "out" / "runs" / RECORDED.name
    shutil.copytree(RECORDED, run)
    return run


def step(n: int) -> TrainStep:
    return TrainStep(n, 100, n / 10, 5.0 - n / 100, 1e-4, 1.0, 10.0, 9.0)


def until(predicate, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"not reached in {timeout:g} s: {what}"
        time.sleep(0.05)


# --------------------------------------------------------------------------- replay


def test_a_recorded_run_is_read_back_at_once_with_the_settings_it_ran_with(tmp_path: Path):
    run = recorded_run(tmp_path)
    events = MetricsFollower(RunFolder(run).metrics).read_new()
    watcher = RunWatcher()
    shown = watcher.show(run, small(tmp_path, epochs=28.0))
    assert shown is not None
    assert shown.live.status == watcher.last_status == "finished"
    assert watcher.attached is None  # nothing writes it: not followed
    assert shown.settings.epochs == 6.0  # its config.json's, not the next Start's 28
    # No train.log: the log is the events' lines, as train --headless printed them.
    printed = io.StringIO()
    printer = HeadlessPrinter(printed)
    for event in events:
        printer(event)
    assert shown.lines == printed.getvalue().splitlines()
    # The charts at once: every logged loss, and validation's scores per epoch.
    losses = [e for e in events if isinstance(e, TrainStep) and e.loss is not None]
    assert len(shown.loss["loss"]) == len(losses) > 10
    epochs = [e.epoch for e in events if isinstance(e, EvalDone) and e.stage == "epoch"]
    assert [x for x, _ in shown.scores["BLEU"]][1:] == epochs  # after the "before" point
    # The status line and the bar are drawn from the last event that sets each.
    assert len(shown.last_events) <= 2
    assert isinstance(shown.last_events[-1], RunDone)
    assert isinstance(shown.last_events[0], TrainStep)


def test_a_run_with_a_log_shows_its_log_and_an_unreadable_config_the_panes_settings(
    tmp_path: Path,
):
    run = recorded_run(tmp_path)
    (RunFolder(run).log).write_text("[data] read\n  a warning of its own\n", encoding="utf-8")
    (RunFolder(run).config).write_text("{torn", encoding="utf-8")
    mine = small(tmp_path, epochs=28.0)
    shown = RunWatcher().show(run, mine)
    assert shown is not None
    assert shown.lines == ["[data] read", "  a warning of its own"]
    assert shown.settings is mine


# --------------------------------------------------------------------------- attached


def test_a_live_run_is_followed_stopped_by_request_and_let_go_when_it_ends(tmp_path: Path):
    run = new_run_dir(tmp_path / "out", "demo")
    write_json(RunFolder(run).config, small(tmp_path, epochs=4.0).to_dict())
    stopped = threading.Event()
    writer = RunWriter(stopped)
    writer.hold(run)  # this process writes the run: live while the test holds it
    recorder = JsonlRecorder(RunFolder(run).metrics)
    try:
        recorder(Phase("train"))
        with (RunFolder(run).log).open("a", encoding="utf-8") as log:
            log.write("[train]\n")
        watcher = RunWatcher()
        shown = watcher.show(run, small(tmp_path, epochs=28.0))
        assert shown is not None
        assert shown.live.status == "running"
        assert watcher.attached is not None
        assert watcher.attached.run_dir == run
        assert shown.settings.epochs == 4.0
        assert shown.lines == ["[train]"]
        followed = watcher.follow()
        assert followed is not None
        assert (followed.lines, list(followed.events), followed.ended) == ([], [], False)
        assert not followed.status_changed
        recorder(step(1))
        with (RunFolder(run).log).open("a", encoding="utf-8") as log:
            log.write("  step 1/100\n")
        followed = watcher.follow()
        assert followed is not None
        assert (followed.lines, list(followed.events)) == (["  step 1/100"], [step(1)])
        said = watcher.stop()
        assert said is not None
        assert said.startswith(f"stop requested: {run.name} (pid ")
        assert stopped.wait(timeout=30)  # the writer found the request in its folder

        def stopping() -> bool:
            look = watcher.follow()
            return look is not None and look.status_changed and look.live.status == "stopping"

        until(stopping, "the status changed to stopping")
        assert watcher.attached is not None  # still writing: still followed
    finally:
        writer.release("stopped")
    followed = watcher.follow()
    assert followed is not None
    assert followed.ended
    assert followed.live.status == "stopped"
    assert watcher.attached is None
    assert watcher.last_status == "stopped"
    assert watcher.follow() is None  # let go: nothing more is read
    assert watcher.stop() is None  # nothing to stop


def test_a_run_that_ended_unseen_is_not_asked_to_stop(tmp_path: Path):
    run = new_run_dir(tmp_path / "out", "demo")
    writer = RunWriter(threading.Event())
    writer.hold(run)
    watcher = RunWatcher()
    try:
        assert watcher.show(run, small(tmp_path)) is not None
        assert watcher.attached is not None
    finally:
        writer.release("finished")
    with pytest.raises(WorkbenchError, match=r"is not running .status: finished"):
        watcher.stop()
    assert watcher.let_go() == run
    assert watcher.let_go() is None


# --------------------------------------------------------------------------- detached


def test_a_detached_start_gives_its_process_the_edited_settings_and_names_the_log(
    tmp_path: Path,
):
    """The process is a real ``workbench train``; an edited value it refuses (one the
    pane's own check would have caught) shows that the fields' values reach it."""
    out = tmp_path / "out"
    watcher = RunWatcher(detached_runs=["--preset", "demo", "--output-dir", str(out)])
    assert not watcher.begin()  # it does not train here
    assert not watcher.running
    refused = dataclasses.replace(small(tmp_path), epochs=-1.0)
    with pytest.raises(WorkbenchError) as caught:
        watcher.start_detached(refused, False, ["epochs", "learning_rate"])
    (run,) = (out / "runs").iterdir()
    message = str(caught.value)
    assert message.startswith("the detached run exited with status 2: ")
    assert "epochs must be in (0, 1000], got -1.0" in message
    assert message.endswith(f"; see {RunFolder(run).log}")


def test_a_detached_resume_with_nothing_to_resume_starts_nothing(tmp_path: Path):
    watcher = RunWatcher(detached_runs=["--preset", "demo"])
    with pytest.raises(WorkbenchError, match="nothing to resume under"):
        watcher.start_detached(small(tmp_path), True, ["epochs"])
    assert not (tmp_path / "out" / "runs").exists()


# --------------------------------------------------------------------------- local


@pytest.fixture
def stand_in_training(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_training is the stand-in (the watcher imports it from its module at start)."""
    from workbench.core.train import run_training as training_module

    monkeypatch.setattr(training_module, "run_training", fake_run_training)


def test_a_local_run_trains_on_a_thread_and_its_run_done_ends_it(tmp_path: Path, stand_in_training):
    watcher = RunWatcher()
    assert watcher.ready()
    assert watcher.begin()  # a run of this app's own
    assert watcher.running
    assert not watcher.ready()
    events: list[Event] = []
    thread = threading.Thread(target=watcher.train, args=(small(tmp_path), False, events.append))
    thread.start()
    thread.join(timeout=60)
    assert watcher.training_done.is_set()
    (done,) = events
    assert isinstance(done, RunDone)
    lines = watcher.took(done)
    assert lines[0] == "[done]"
    assert lines[-1].startswith(f"  run folder: {done.run_dir} ")
    assert not watcher.running
    assert watcher.last_status == "finished"
    assert watcher.last_run_dir == Path(done.run_dir)
    assert watcher.ready()


def test_stop_ends_a_local_run_after_its_step_with_a_checkpoint(
    tmp_path: Path, stand_in_training, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv(SECONDS_VARIABLE, "120")  # trains until stopped
    watcher = RunWatcher()
    assert watcher.stop() is None  # nothing trains yet
    watcher.begin()
    events: list[Event] = []  # the stand-in sends no RunDone for a stopped run
    thread = threading.Thread(target=watcher.train, args=(small(tmp_path), False, events.append))
    thread.start()
    until(lambda: not watcher.training_done.is_set(), "the run started")
    assert watcher.stop() == "stopping after this step (a checkpoint is written)…"
    assert watcher.stop() is None  # asked already
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert watcher.training_done.is_set()
    (run,) = (tmp_path / "out" / "runs").iterdir()
    summary = read_summary(run)
    assert summary is not None
    assert summary.status == "stopped"
    assert (RunFolder(run).checkpoints / "checkpoint-1").is_dir()
    # Its thread raised or its start failed: the pane says so, and a run may start again.
    watcher.failed()
    assert not watcher.running
    assert watcher.last_status == "failed"


def test_no_run_is_shown_over_the_local_one_while_it_trains(tmp_path: Path):
    watcher = RunWatcher()
    watcher.begin()
    assert watcher.show(recorded_run(tmp_path), small(tmp_path)) is None
    assert watcher.shows == 0
