"""The TUI and runs it did not start: a run another process writes is followed in the Training pane
and stopped with ``x``; a run of its own is handed to a detached process when the user quits,
and trains on when the terminal closes under it.

The tests that train (or build), split from tests/tui/test_tui_attach.py, whose other tests do
not.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from textual.widgets import Input, Log, Static

from tests.helpers.processes import (
    in_a_terminal,
    only_run,
    start_detached_run,
    train_steps,
    wait_until,
)
from tests.helpers.runs import small, tiny_toml
from tests.helpers.tui import show_pane, start_training, wait_for
from workbench.core.live.liveness import run_liveness
from workbench.core.live.stop_request import request_stop, wait_until_ended
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.quit_dialog import QuitDialog
from workbench.tui.widgets.training_pane import TrainingPane


def status_text(training: TrainingPane) -> str:
    return str(training.query_one("#train-status", Static).render())


async def test_the_tui_follows_a_run_another_process_writes_and_x_stops_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    run, record = start_detached_run(tmp_path)
    try:
        wait_until(lambda: len(train_steps(run)) >= 2, "two steps")
        # The app's own settings say 2 epochs; the run it attaches to has 40.
        app = WorkbenchApp(small(Path("."), name="translation_output", epochs=2.0))
        async with app.run_test(size=(100, 30)) as pilot:
            await show_pane(pilot, "training")
            training = app.query_one(TrainingPane)
            await wait_for(pilot, lambda: training.watcher.attached is not None, what="attached")
            assert training.query_one("#set-epochs", Input).value == "40"
            line = str(training.query_one("#train-run", Static).render())
            assert line.startswith(f"watching {run.name}: running · pid {record.pid} on host")
            seen: list[str] = []

            def step_shown() -> int:
                text = status_text(training)
                seen.append(text)
                return int(text.split("step ")[1].split("/")[0]) if "step " in text else 0

            first = step_shown()
            await wait_for(pilot, lambda: step_shown() > max(first, 2), what="the step moving")
            await pilot.press("x")
            await wait_for(
                pilot, lambda: training.watcher.attached is None, timeout=120, what="ended"
            )
            assert training.watcher.last_status == "stopped"
            assert status_text(training) == "stopped"
            # Let go: the fields are the app's own settings again, for its own Start.
            assert training.query_one("#set-epochs", Input).value == "2"
            assert not any("killed" in text for text in seen)
            log = [str(line) for line in training.query_one("#train-log", Log).lines]
            assert any("stop requested (by a workbench tui on host" in x for x in log)
    finally:
        if run_liveness(run).live:
            os.kill(record.pid, signal.SIGKILL)
    assert json.loads((run / "summary.json").read_text())["status"] == "stopped"


async def test_quitting_while_training_asks_and_can_hand_the_run_to_the_background(
    tmp_path: Path,
):
    app = WorkbenchApp(small(tmp_path, epochs=40.0))
    async with app.run_test(size=(100, 30)) as pilot:
        training = await start_training(pilot)
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitDialog), what="the question")
        await pilot.press("c")  # cancel: still training
        await wait_for(pilot, lambda: not isinstance(app.screen, QuitDialog), what="closed")
        assert training.watcher.running
        assert app.is_running
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitDialog), what="the question")
        await pilot.press("b")
        await wait_for(pilot, lambda: not app.is_running, timeout=120, what="the app gone")
    run = training.watcher.last_run_dir
    assert run is not None
    live = run_liveness(run)
    try:
        assert live.status == "running"
        assert live.record is not None
        assert app.farewell[:2] == [
            f"run folder: {run}",
            f"training in the background: pid {live.record.pid}, its lines in {run / 'train.log'}",
        ]
        assert live.record.pid != os.getpid()  # a process of its own now
        steps = len(train_steps(run))
        wait_until(lambda: len(train_steps(run)) > steps, "the detached process training")
    finally:
        if run_liveness(run).live:
            request_stop(run, "a test")
        ended = wait_until_ended(run, 120)
    assert ended.status == "stopped"
    every_step = train_steps(run)  # stopped, continued, stopped: every step once, in order
    assert all(a < b for a, b in itertools.pairwise(every_step))


def test_a_tui_whose_terminal_closes_lets_its_run_train_to_the_end(tmp_path: Path):
    (tmp_path / "tiny.toml").write_text(tiny_toml(epochs=8), encoding="utf-8")
    argv = [sys.executable, "-m", "workbench", "tui", "--preset", "demo", "--config", "tiny.toml"]
    proc, master = in_a_terminal(argv, tmp_path)
    shown = bytearray()

    def read() -> None:  # what the app draws, read so that the terminal never fills up
        with contextlib.suppress(OSError):
            while chunk := os.read(master, 1 << 16):
                shown.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    runs = tmp_path / "translation_output" / "runs"
    try:
        wait_until(lambda: b"Dataset" in shown, "the first screen", timeout=120)
        deadline = time.monotonic() + 120
        while not runs.is_dir():  # the Training pane mounts just after the first frame
            assert time.monotonic() < deadline, bytes(shown[-500:])
            assert proc.poll() is None, bytes(shown[-500:])
            os.write(master, b"2")
            time.sleep(0.5)
            os.write(master, b"s")
            time.sleep(1.5)
        run = only_run(tmp_path)
        wait_until(lambda: len(train_steps(run)) >= 2, "two steps")
        os.close(master)  # the terminal goes away under the app: SIGHUP
        assert proc.wait(timeout=600) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert json.loads((run / "summary.json").read_text())["status"] == "finished"
    assert run_liveness(run).status == "finished"
