"""Training pane: settings, Start/Stop/Resume, live log, progress and charts.

At start it shows the newest run as it ended (:meth:`TrainingPane.show_run`: its
``metrics.jsonl`` replayed into charts and log, its status and best epoch). A run is
:func:`~workbench.core.train.run_training.run_training` on a thread worker, as in ``train
--headless``; the worker never touches widgets: the core's event sink posts
:class:`RunEvent` messages and this pane draws them. Stop sets the core's
``threading.Event``: the trainer ends after the current step with a checkpoint. A run
another process writes is *attached*: replayed, then followed every
:data:`FOLLOW_SECONDS` with its own settings; ``x`` leaves it a stop request, the only
thing a viewer may write.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Log, ProgressBar, Static, TabbedContent

from workbench.core.config.build import build_config
from workbench.core.config.run_config import RunConfig
from workbench.core.config.settings import flag_name
from workbench.core.events import (
    DataProgress,
    EvalDone,
    Event,
    Phase,
    RunDone,
    SampleProgress,
    ScoreProgress,
    TrainStep,
)
from workbench.core.live.follow import RunReader
from workbench.core.live.liveness import Liveness, run_liveness
from workbench.core.live.stop_request import request_stop
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.saved_config import started_settings
from workbench.core.views.event_text import EventText, data_status
from workbench.core.views.numbers import format_seconds
from workbench.core.views.training_text import last_run_line
from workbench.errors import WorkbenchError
from workbench.tui.messages import ForwardsWorkerFailures, RunEvent, RunFinished, checked
from workbench.tui.widgets.charts import SeriesChart
from workbench.tui.widgets.replay import charted, last_drawn, replayed_series
from workbench.tui.widgets.run_settings import EDITABLE, NEXT_START, SettingsFields, header_text

LOG_LINES = 1000
#: Seconds between two reads of an attached run's new events (the view lags by about this).
FOLLOW_SECONDS = 1.0
#: How long Start or Resume waits for the last run's worker to let go of its folder.
FOLDER_LET_GO_SECONDS = 10.0


class TrainingPane(ForwardsWorkerFailures, Vertical):
    """Start, watch and stop fine-tuning."""

    def __init__(
        self, config: RunConfig, detached_runs: list[str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.config = config
        #: The flags a detached run is started with, when Start starts one (a browser tab).
        self.detached_runs = detached_runs
        self.stop_flag = threading.Event()
        self.running = False
        self.last_status: str | None = None
        self.last_run_dir: Path | None = None  # the folder of this pane's last own run
        self.text = EventText()
        #: The run another process writes, which this pane follows (attached).
        self.attached: RunReader | None = None
        self.shows = 0  # runs shown so far: a late start-up replay must not replace one
        #: Clear while this pane's training thread runs (the app waits on it when its
        #: terminal went away mid-run).
        self.training_done = threading.Event()
        self.training_done.set()
        #: Whether the log shows the events' lines (a run with a train.log shows its own).
        self.lines_from_events = True
        #: Whose settings the line above the charts shows, and they (see _show_header).
        self.header: tuple[str, RunConfig] = (NEXT_START, config)

    def compose(self) -> ComposeResult:
        """The editable settings, the run buttons and status, the charts and the log."""
        yield SettingsFields(self.config, id="train-settings")
        with Horizontal(id="train-buttons"):
            yield Button("Start (s)", id="start", variant="success")
            yield Button("Stop (x)", id="stop", variant="error", disabled=True)
            yield Button("Resume (r)", id="resume")
            # A total from the start: an indeterminate bar animates even when idle.
            yield ProgressBar(total=1, id="train-progress", show_eta=False)
            yield Static("idle", id="train-status")
        yield Static(header_text(NEXT_START, self.config), id="train-config")
        yield Static("no run yet in this output folder", id="train-run")
        with Horizontal(id="train-charts"):
            yield SeriesChart("training loss", "step", id="loss-chart")
            yield SeriesChart("validation BLEU / chrF", "epoch", id="bleu-chart")
        yield Log(id="train-log", max_lines=LOG_LINES)

    def on_mount(self) -> None:
        """Poll an attached run (another process's) every :data:`FOLLOW_SECONDS`."""
        self.set_interval(FOLLOW_SECONDS, self._follow)

    def edited_config(self) -> RunConfig:
        """The pane's settings applied to the base config, validated like the CLI."""
        values: dict[str, Any] = self.config.to_dict()
        preset = values.pop("preset")
        values.update(self.query_one(SettingsFields).edited())
        return build_config(preset, overrides=values)

    # ------------------------------------------------------------------ actions

    def action_start(self) -> None:
        """s: start a new run with the settings as edited."""
        self._launch(resume=False)

    def action_resume(self) -> None:
        """r: continue the last run from its newest checkpoint."""
        self._launch(resume=True)

    def action_stop(self) -> None:
        """x: stop the run after this step, with a checkpoint (an attached one by request)."""
        if self.attached is not None and not self.running:
            self._stop_attached(self.attached.run_dir)
            return
        if self.running and not self.stop_flag.is_set():
            self.stop_flag.set()
            self.write_log("stopping after this step (a checkpoint is written)…")
            self.query_one("#train-status", Static).update("stopping…")

    @on(Button.Pressed, "#start")
    def _start_pressed(self) -> None:
        self.action_start()

    @on(Button.Pressed, "#stop")
    def _stop_pressed(self) -> None:
        self.action_stop()

    @on(Button.Pressed, "#resume")
    def _resume_pressed(self) -> None:
        self.action_resume()

    def _stop_attached(self, run_dir: Path) -> None:
        """Leave the attached run a stop request; its writer stops at the next step."""
        try:
            live = request_stop(run_dir, "a workbench tui")
        except WorkbenchError as err:
            self.app.notify(str(err), title="Stop", markup=False)
            return
        self.write_log(
            f"stop requested: {run_dir.name} ({live.why()}) stops after its next step, "
            "with a checkpoint"
        )
        self.query_one("#train-status", Static).update("stopping…")

    def _launch(self, resume: bool) -> None:
        # The last run's RunDone arrives just before its worker lets go of the run folder:
        # a Resume pressed at once waits those milliseconds instead of being refused.
        if self.running or not self.training_done.wait(timeout=FOLDER_LET_GO_SECONDS):
            self.app.notify("a run is already in progress", severity="warning")
            return
        if self.attached is not None:  # its fields show the watched run's settings
            name = self.attached.run_dir.name
            self._let_go()
            self.app.notify(
                f"stopped watching {name}, which trains on (x in its view stops it); the "
                "fields show this pane's own settings again",
                markup=False,
            )
            return
        config = checked(self.app, "Invalid setting", self.edited_config)
        if config is None:
            return
        self.last_status = self.last_run_dir = None
        if self.detached_runs is not None:
            self.write_log(("resuming" if resume else "starting") + " a run in the background…")
            self.start_detached(config, resume)
            return
        self.config = config
        self._show_header("this run", config)
        self.stop_flag = threading.Event()
        self.running = True
        self._set_buttons()
        for chart in self.query(SeriesChart):
            chart.clear_series()
        self.query_one("#train-progress", ProgressBar).update(total=None, progress=0)
        self.text = EventText()  # a new run: no "before" scores yet
        self.lines_from_events = True
        self.write_log(("resuming" if resume else "starting") + f" {config.preset} run")
        self.train(config, resume)

    def _set_buttons(self) -> None:
        self.query_one("#start", Button).disabled = self.running
        self.query_one("#resume", Button).disabled = self.running
        self.query_one("#stop", Button).disabled = not self.running
        # Keep focus on a button: a disabled one loses focus, and Textual would move it
        # into a settings field where the single-key shortcuts are typed as text.
        if self.app.query_one(TabbedContent).active == "training":
            self.query_one("#stop" if self.running else "#start", Button).focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="training")
    def train(self, config: RunConfig, resume: bool) -> None:
        """The core run; events arrive back on the main thread as RunEvent messages."""
        from workbench.core.train.run_training import run_training

        def post(event: Event) -> None:
            self.post_message(RunEvent(event))

        self.training_done.clear()
        try:
            run_training(config, post, self.stop_flag, resume=resume)
        finally:
            self.training_done.set()

    @work(thread=True, exclusive=True, exit_on_error=False, group="training")
    def start_detached(self, config: RunConfig, resume: bool) -> None:
        """Start the run in a process of its own (it outlives this app), then follow it."""
        from workbench.core.live.detach import start_detached_run
        from workbench.core.run_folder.output_folder import new_run_dir
        from workbench.core.train.checkpoints import run_to_resume

        edited = [f"{flag_name(field)}={getattr(config, field)}" for field, _ in EDITABLE]
        args = [*(self.detached_runs or []), *edited, *(["--resume"] if resume else [])]
        root = Path(config.output_dir).expanduser()
        run_dir = run_to_resume(root) if resume else new_run_dir(root, config.preset)
        start_detached_run(args, run_dir)
        self.app.call_from_thread(self.show_run, run_dir)

    def worker_failed(self, error: BaseException | None) -> None:
        """Called by the app's single worker-failure handler for the training worker."""
        self.running = False
        self.last_status = "failed"
        self._set_buttons()
        self.query_one("#train-status", Static).update("failed")
        self.write_log(f"error: {error}")

    # ------------------------------------------------------------------ events

    def write_log(self, line: str) -> None:
        """Append a line to the bounded log."""
        self.query_one(Log).write_line(line)

    def show_run(self, run_dir: Path) -> None:
        """Show a run: charts and log replayed from its ``metrics.jsonl``, its settings,
        status and best epoch; a live one is then followed (attached)."""
        if self.running:
            return
        self.shows += 1
        self._let_go()
        for chart in self.query(SeriesChart):
            chart.clear_series()
        self.query_one(Log).clear()
        self.text = EventText()
        # The log shows the run's train.log where it has one (every line headless prints,
        # notes and warnings too); metrics.jsonl, the numbers, draws the rest.
        reader = RunReader(run_dir)
        lines, events = reader.read_new()
        self.lines_from_events = not reader.has_log()
        if self.lines_from_events:  # a run of an earlier version: its events are its log
            lines = [line for event in events for line in self.text.lines(event)]
        for line in lines[-LOG_LINES:]:
            self.write_log(line)
        for event in last_drawn(events):
            self._show(event, charts=False, log=False)
        # Each chart drawn once: a point at a time, a long run's hundreds of logging steps
        # would redraw the chart hundreds of times on the main thread.
        loss, scores = replayed_series(events)
        self.query_one("#loss-chart", SeriesChart).set_series(loss)
        self.query_one("#bleu-chart", SeriesChart).set_series(scores)
        live = run_liveness(run_dir)
        settings = started_settings(run_dir, self.config)
        if live.live:
            self.attached = reader  # followed by _follow, every FOLLOW_SECONDS
            self.query_one(SettingsFields).show(settings)  # the run's own
        self._show_run_header(run_dir, settings)
        self._show_liveness(run_dir, live)

    def _show_run_header(self, run_dir: Path, settings: RunConfig) -> None:
        """The shown run's settings above the charts, as its config.json has them
        (:func:`started_settings`), not the next Start's, which may differ."""
        if settings is self.config:  # no config.json that reads: say whose they are
            self._show_header(f"run {run_dir.name}, no config.json; {NEXT_START}", settings)
        else:
            self._show_header(f"run {run_dir.name}", settings)

    def _show_header(self, whose: str, config: RunConfig) -> None:
        """The line above the charts; beside fields that are not a watched run's, it says
        they are the next Start's whenever it shows a run's settings."""
        self.header = (whose, config)
        differ = not whose.endswith(NEXT_START) and self.attached is None
        self.query_one("#train-config", Static).update(header_text(whose, config, differ))

    def _let_go(self) -> None:
        """Stop following the attached run (it goes on); the fields are the next Start's
        again, while the line above the charts keeps the shown run's settings."""
        if self.attached is not None:
            self.attached = None
            self.query_one(SettingsFields).show(self.config)
            self._show_header(*self.header)  # the run is still shown: now beside them

    def _show_liveness(self, run_dir: Path, live: Liveness) -> None:
        """The run's status line; a live run names its writer and how to stop it."""
        self.last_status = live.status
        if not live.live:
            self.query_one("#train-status", Static).update(live.status)
        if live.status == "finished":
            self.query_one("#train-progress", ProgressBar).update(total=1, progress=1)
        line = last_run_line(run_dir.name, live.status, live.summary)
        if live.live:
            line = f"watching {run_dir.name}: {live.status} · {live.why()} · x stops it"
        self.query_one("#train-run", Static).update(Text(line))

    def _follow(self) -> None:
        """Draw what the attached run wrote since the last look; let go once it ends."""
        reader = self.attached
        if reader is None:
            return
        self._draw_new(reader)
        live = run_liveness(reader.run_dir)
        if live.live:
            if live.status != self.last_status:
                self._show_liveness(reader.run_dir, live)
            return
        self._draw_new(reader)  # its last lines, written as it ended
        self._let_go()
        self._show_liveness(reader.run_dir, live)
        summary = live.summary or RunSummary()
        self.post_message(RunFinished(live.status, str(reader.run_dir), summary))

    def _draw_new(self, reader: RunReader) -> None:
        self.lines_from_events = self.lines_from_events and not reader.has_log()
        lines, events = reader.read_new()
        for line in lines:
            self.write_log(line)
        for event in events:
            self._show(event)

    @on(RunEvent)
    def _run_event(self, message: RunEvent) -> None:
        message.stop()
        event = message.event
        self._show(event)
        if isinstance(event, RunDone):
            self.running = False
            self.last_status = event.status
            self.last_run_dir = Path(event.run_dir)
            # Its config.json: a resumed run's own, not the pane's.
            self._show_run_header(
                self.last_run_dir, started_settings(self.last_run_dir, self.config)
            )
            self._set_buttons()
            self.query_one("#train-run", Static).update(
                Text(last_run_line(Path(event.run_dir).name, event.status, event.summary))
            )
            self.post_message(RunFinished(event.status, event.run_dir, event.summary))

    def _show(self, event: Event, charts: bool = True, log: bool = True) -> None:
        """Draw one event: the log line, the status, the progress bar, a chart point
        (unless ``charts`` or ``log`` is off: a replay draws those at once)."""
        # The log says what `train --headless` prints, in the same words (unless the
        # run's own train.log already said it).
        if log and self.lines_from_events:
            for line in self.text.lines(event):
                self.write_log(line)
        if isinstance(event, Phase):
            self.query_one("#train-status", Static).update(event.name)
        elif isinstance(event, SampleProgress | DataProgress | ScoreProgress):
            done, total, status = data_status(event)
            bar = self.query_one("#train-progress", ProgressBar)
            bar.update(total=total or None, progress=done)
            self.query_one("#train-status", Static).update(status)
        elif isinstance(event, TrainStep):
            self._train_step(event, charts)
        elif isinstance(event, EvalDone) and charts and charted(event):
            chart = self.query_one("#bleu-chart", SeriesChart)
            chart.add_point("BLEU", event.epoch, event.bleu)
            chart.add_point("chrF", event.epoch, event.chrf)
        elif isinstance(event, RunDone):
            self.query_one("#train-status", Static).update(event.status)

    def _train_step(self, e: TrainStep, charts: bool = True) -> None:
        bar = self.query_one("#train-progress", ProgressBar)
        bar.update(total=e.max_steps or None, progress=e.step)
        status = (
            f"step {e.step}/{e.max_steps} · epoch {e.epoch:.2f} · "
            f"{(e.samples_per_second or 0):.1f} samples/s · "
            f"ETA {format_seconds(e.eta_seconds)}"
        )
        self.query_one("#train-status", Static).update(status)
        if charts:
            self.query_one("#loss-chart", SeriesChart).add_point("loss", e.step, e.loss)
