"""How the app ends around a run that trains: the question on quit, the hand-over to a
process of its own, SIGTERM, and a terminal that goes away.

- ``q`` (or Ctrl-C) while this app's run trains asks (:class:`QuitDialog`): stop it with a
  checkpoint, keep it training in the background, or stay. The background is a detached
  process that continues the run from the checkpoint just written, bit for bit, as
  ``--resume`` does; the app exits once that process holds the run folder, and prints how
  to follow and stop it.
- SIGTERM (kill, a batch system) stops training with a checkpoint, then exits.
- SIGHUP (the SSH link dropped, ``tmux kill-session``): the UI ends, and the run trains
  on to its end in this process; :func:`workbench.cli.tui.run` waits for it. Its lines go
  on into the run's ``train.log``, and any ``workbench tui`` attaches to it.

Python's default for both signals ends the process at once, leaving the terminal in raw
mode on the alternate screen and losing a running epoch. The handlers are not installed
under ``run_test`` (headless), which shares the test process's signal handlers.
"""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING

from workbench.errors import WorkbenchError
from workbench.tui.widgets.quit_dialog import BACKGROUND, STOP, QuitDialog
from workbench.tui.widgets.training_pane import TrainingPane

if TYPE_CHECKING:
    from textual.app import App

    from workbench.core.config.run_config import RunConfig

    #: Type checkers see the app this is mixed into; at run time it is a plain mixin.
    _MixedIntoApp = App[int]
else:
    _MixedIntoApp = object

#: The longest wait for a stop's checkpoint before the app exits (the thread goes on).
QUIT_WAIT_SECONDS = 4.0


class _Nowhere:
    """Stands in for Textual's writer thread once the terminal is gone: what the app
    would draw is dropped, and stopping it never waits."""

    def write(self, text: str) -> None:
        del text

    def flush(self) -> None:
        return

    def stop(self) -> None:
        return


class QuitsAroundTraining(_MixedIntoApp):
    """The app's quitting, for a :class:`~textual.app.App` with a :class:`TrainingPane`."""

    config: RunConfig
    #: Lines to print once the app has left the screen (where a handed-over run is).
    farewell: list[str]
    #: The terminal went away while this app's run trained: the process lives on.
    keeps_training: bool
    handing_over: bool
    training: TrainingPane | None

    def catch_hangups(self) -> None:
        """SIGTERM stops and quits; SIGHUP lets the UI go and the run train on."""
        if self.is_headless:
            return
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, lambda: self.call_later(self.stop_and_quit))
        loop.add_signal_handler(signal.SIGHUP, self.terminal_closed)

    def terminal_closed(self) -> None:
        """SIGHUP: the terminal is gone; no write to it may fail, and the UI ends.

        The driver's output goes nowhere from now on (:class:`_Nowhere`), so nothing
        the shutdown writes can wait on Textual's writer thread and its bounded queue:
        once, under load, the shutdown's last ``put`` into that queue blocked for good
        after a SIGHUP, the queue full while the thread waited for items.
        """
        from workbench.core.live.detach import let_go_of_terminal

        let_go_of_terminal()
        driver = getattr(self, "_driver", None)
        if driver is not None and hasattr(driver, "_writer_thread"):
            driver._writer_thread = _Nowhere()
        self.keeps_training = self.training is not None and self.training.watcher.running
        self.exit(0)

    def wait_for_training(self) -> None:
        """Block until this app's training thread has ended (after the UI has)."""
        if self.training is not None:
            self.training.watcher.training_done.wait()

    async def action_quit(self) -> None:
        """Quit; with this app's run training, ask first (stop, background, or stay)."""
        if isinstance(self.screen, QuitDialog):
            return  # asked already
        if self.handing_over:
            self.notify("handing the run over to a process of its own; a moment…")
            return
        training = self.training
        if training is None or not training.watcher.running:
            self.exit(0)
            return

        async def answered(answer: str | None) -> None:
            if answer == STOP:
                await self.stop_and_quit()
            elif answer == BACKGROUND:
                await self.hand_over_and_quit(training)

        self.push_screen(QuitDialog(f"the {training.config.preset} run"), answered)

    async def stop_and_quit(self) -> None:
        """Stop training with a checkpoint, wait a moment for it, then exit."""
        training = self.training
        if training is not None and training.watcher.running:
            training.action_stop()
            self.notify("stopping training with a checkpoint…")
            waited = 0.0
            while training.watcher.running and waited < QUIT_WAIT_SECONDS:
                await asyncio.sleep(0.1)
                waited += 0.1
        self.exit(0)

    async def hand_over_and_quit(self, training: TrainingPane) -> None:
        """Stop the run with a checkpoint, have a detached process continue it, exit."""
        from workbench.core.live.detach import continue_detached
        from workbench.core.views.live_text import detached_lines

        self.handing_over = True
        training.action_stop()
        self.notify("handing the run over: stopping at the next step with a checkpoint…")
        while training.watcher.running:
            await asyncio.sleep(0.1)
        run_dir, status = training.watcher.last_run_dir, training.watcher.last_status
        if status == "stopped" and run_dir is not None:
            try:
                process = await asyncio.to_thread(
                    continue_detached, run_dir, self.config.preset, self.config.output_dir
                )
                self.farewell = detached_lines(run_dir, process.pid, self.config.output_dir)
            except WorkbenchError as err:
                self.farewell = [f"workbench: error: {err}"]
        else:
            self.farewell = [
                f"the run {status or 'ended'} before it could be handed over"
                + (f": {run_dir}" if run_dir else "")
            ]
        self.exit(0)
