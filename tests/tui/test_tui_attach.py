"""The TUI and runs it did not start: a run another process writes is followed in the
Training pane and stopped with ``x``; a run of its own is handed to a detached process
when the user quits, and trains on when the terminal closes under it.

The writers are real processes (``workbench train --detach``) and the terminal a real
pseudo-terminal; the app is driven by Textual's Pilot or by keys typed into that terminal.
"""

from __future__ import annotations

import threading
from pathlib import Path

from textual.widgets import Input, Static

from tests.helpers.runs import small
from tests.helpers.tui import show_pane, wait_for
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.training_pane import TrainingPane


async def test_the_header_shows_the_watched_runs_settings_and_says_when_they_are_the_next_starts(
    tmp_path: Path,
):
    """A run of 4 epochs, watched by an app whose own settings say 28: while it trains and
    after it ends, the line above the charts is the run's (its config.json); once it has
    ended the fields are the next Start's again, and the line says so."""
    from workbench.core.atomic import write_json
    from workbench.core.live.writer import RunWriter
    from workbench.core.run_folder.layout import RunFolder
    from workbench.core.run_folder.output_folder import new_run_dir

    mine = small(tmp_path, epochs=28.0)
    run = new_run_dir(Path(mine.output_dir), mine.preset)
    write_json(RunFolder(run).config, small(tmp_path, epochs=4.0).to_dict())
    writer = RunWriter(threading.Event())
    writer.hold(run)  # this process writes the run: live while the test holds it
    app = WorkbenchApp(mine)
    try:
        async with app.run_test(size=(200, 30)) as pilot:
            await show_pane(pilot, "training")
            training = app.query_one(TrainingPane)
            next_starts = "the fields: next Start's"

            def header() -> str:
                return str(training.query_one("#train-config", Static).render())

            await wait_for(pilot, lambda: training.watcher.attached is not None, what="attached")
            assert header().startswith(f"run {run.name}: epochs 4 · ")
            assert next_starts not in header()  # the fields hold the watched run's
            assert training.query_one("#set-epochs", Input).value == "4"
            writer.release("stopped")
            await wait_for(pilot, lambda: training.watcher.attached is None, what="the end seen")
            assert training.watcher.last_status == "stopped"
            assert header().startswith(f"run {run.name}: epochs 4 · ")  # not the preset's 28
            assert header().endswith(next_starts)
            assert training.query_one("#set-epochs", Input).value == "28"
    finally:
        writer.release("stopped")
