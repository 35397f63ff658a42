"""Training pane: settings, Start/Stop/Resume, live log, progress and charts.

It draws what its :class:`~workbench.tui.run_watcher.RunWatcher` reports, which holds
the run's state: at start the newest run as it ended (replayed into charts and log, its
status and best epoch), a run of this app's own as it trains (the watcher's run on this
pane's thread worker, whose events come back as :class:`RunEvent` messages), and a run
another process writes (attached), followed every
:data:`~workbench.tui.run_watcher.FOLLOW_SECONDS` with its own settings in the fields.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Log, ProgressBar, Static, TabbedContent

from workbench.core.config.build import build_config
from workbench.core.config.run_config import RunConfig
from workbench.core.events import Event, RunDone
from workbench.core.live.liveness import Liveness
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.saved_config import started_settings
from workbench.core.views.training_text import last_run_line
from workbench.errors import WorkbenchError
from workbench.tui.messages import ForwardsWorkerFailures, RunEvent, RunFinished, checked
from workbench.tui.run_drawing import marks
from workbench.tui.run_watcher import FOLLOW_SECONDS, LOG_LINES, RunWatcher
from workbench.tui.widgets.charts import SeriesChart
from workbench.tui.widgets.run_settings import EDITABLE, NEXT_START, SettingsFields, header_text


class TrainingPane(ForwardsWorkerFailures, Vertical):
    """Start, watch and stop fine-tuning."""

    def __init__(
        self, config: RunConfig, detached_runs: list[str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        #: The next Start's settings before the fields' edits (a local run's, once started).
        self.config = config
        self.watcher = RunWatcher(detached_runs)
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
        try:
            said = self.watcher.stop()
        except WorkbenchError as err:
            self.app.notify(str(err), title="Stop", markup=False)
            return
        if said is not None:
            self.write_log(said)
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

    def _launch(self, resume: bool) -> None:
        if not self.watcher.ready():
            self.app.notify("a run is already in progress", severity="warning")
            return
        watched = self._let_go()  # its fields showed the watched run's settings
        if watched is not None:
            self.app.notify(
                f"stopped watching {watched.name}, which trains on (x in its view stops it); "
                "the fields show this pane's own settings again",
                markup=False,
            )
            return
        config = checked(self.app, "Invalid setting", self.edited_config)
        if config is None:
            return
        doing = "resuming" if resume else "starting"
        if not self.watcher.begin():
            self.write_log(f"{doing} a run in the background…")
            self.start_detached(config, resume)
            return
        self.config = config
        self._show_header("this run", config)
        self._set_buttons()
        for chart in self.query(SeriesChart):
            chart.clear_series()
        self.query_one("#train-progress", ProgressBar).update(total=None, progress=0)
        self.write_log(f"{doing} {config.preset} run")
        self.train(config, resume)

    def _set_buttons(self) -> None:
        running = self.watcher.running
        self.query_one("#start", Button).disabled = running
        self.query_one("#resume", Button).disabled = running
        self.query_one("#stop", Button).disabled = not running
        # Keep focus on a button: a disabled one loses focus, and Textual would move it
        # into a settings field where the single-key shortcuts are typed as text.
        if self.app.query_one(TabbedContent).active == "training":
            self.query_one("#stop" if running else "#start", Button).focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="training")
    def train(self, config: RunConfig, resume: bool) -> None:
        """The core run; events arrive back on the main thread as RunEvent messages."""

        def post(event: Event) -> None:
            self.post_message(RunEvent(event))

        self.watcher.train(config, resume, post)

    @work(thread=True, exclusive=True, exit_on_error=False, group="training")
    def start_detached(self, config: RunConfig, resume: bool) -> None:
        """Start the run in a process of its own (it outlives this app), then follow it."""
        run_dir = self.watcher.start_detached(config, resume, [field for field, _ in EDITABLE])
        self.app.call_from_thread(self.show_run, run_dir)

    def worker_failed(self, error: BaseException | None) -> None:
        """Called by the app's single worker-failure handler for the training worker."""
        self.watcher.failed()
        self._set_buttons()
        self.query_one("#train-status", Static).update("failed")
        self.write_log(f"error: {error}")

    # ------------------------------------------------------------------ runs shown

    def write_log(self, line: str) -> None:
        """Append a line to the bounded log."""
        self.query_one(Log).write_line(line)

    def show_when_read(self, run_dir: Path) -> None:
        """Show a run once its metrics.jsonl is read off the main thread (the app would
        not answer a key meanwhile), unless the pane shows another run by then (one the
        user opened or started)."""
        self._read_then_show(run_dir, self.watcher.shows)

    @work(thread=True, exit_on_error=False, group="replay")
    def _read_then_show(self, run_dir: Path, shows: int) -> None:
        self.watcher.read_ahead(run_dir)
        self.app.call_from_thread(self._show_if_still, run_dir, shows)

    def _show_if_still(self, run_dir: Path, shows: int) -> None:
        if self.watcher.shows == shows:
            self.show_run(run_dir)

    def show_run(self, run_dir: Path) -> None:
        """Show a run: charts and log replayed from its ``metrics.jsonl``, its settings,
        status and best epoch; a live one is then followed (attached)."""
        shown = self.watcher.show(run_dir, self.config)
        if shown is None:  # this app's own run trains, and stays shown
            return
        if shown.left is not None:
            self._fields_back()
        for chart in self.query(SeriesChart):
            chart.clear_series()
        self.query_one(Log).clear()
        for line in shown.lines:
            self.write_log(line)
        for event in shown.last_events:
            self._draw(event, charts=False)
        # Each chart drawn once: a point at a time, a long run's hundreds of logging steps
        # would redraw the chart hundreds of times on the main thread.
        self.query_one("#loss-chart", SeriesChart).set_series(shown.loss)
        self.query_one("#bleu-chart", SeriesChart).set_series(shown.scores)
        if shown.live.live:
            self.query_one(SettingsFields).show(shown.settings)  # the run's own
        self._show_run_header(run_dir, shown.settings)
        self._show_liveness(run_dir, shown.live)

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
        differ = not whose.endswith(NEXT_START) and self.watcher.attached is None
        self.query_one("#train-config", Static).update(header_text(whose, config, differ))

    def _let_go(self) -> Path | None:
        """Stop following the attached run (it goes on); the folder let go, if any."""
        run_dir = self.watcher.let_go()
        if run_dir is not None:
            self._fields_back()
        return run_dir

    def _fields_back(self) -> None:
        """No run is watched: the fields are the next Start's again, while the line above
        the charts keeps the shown run's settings, now beside them."""
        self.query_one(SettingsFields).show(self.config)
        self._show_header(*self.header)

    def _show_liveness(self, run_dir: Path, live: Liveness) -> None:
        """The run's status line; a live run names its writer and how to stop it."""
        if not live.live:
            self.query_one("#train-status", Static).update(live.status)
        if live.status == "finished":
            self.query_one("#train-progress", ProgressBar).update(total=1, progress=1)
        line = last_run_line(run_dir.name, live.status, live.summary)
        if live.live:
            line = f"watching {run_dir.name}: {live.status} · {live.why()} · x stops it"
        self.query_one("#train-run", Static).update(Text(line))

    def _follow(self) -> None:
        """Draw what the attached run wrote since the last look; once it ends, say so."""
        followed = self.watcher.follow()
        if followed is None:
            return
        for line in followed.lines:
            self.write_log(line)
        for event in followed.events:
            self._draw(event)
        if followed.ended:
            self._fields_back()
        if followed.ended or followed.status_changed:
            self._show_liveness(followed.run_dir, followed.live)
        if followed.ended:
            summary = followed.live.summary or RunSummary()
            self.post_message(RunFinished(followed.live.status, str(followed.run_dir), summary))

    @on(RunEvent)
    def _run_event(self, message: RunEvent) -> None:
        message.stop()
        event = message.event
        for line in self.watcher.took(event):
            self.write_log(line)
        self._draw(event)
        if isinstance(event, RunDone):
            run_dir = Path(event.run_dir)
            # Its config.json: a resumed run's own, not the pane's.
            self._show_run_header(run_dir, started_settings(run_dir, self.config))
            self._set_buttons()
            self.query_one("#train-run", Static).update(
                Text(last_run_line(run_dir.name, event.status, event.summary))
            )
            self.post_message(RunFinished(event.status, event.run_dir, event.summary))

    def _draw(self, event: Event, charts: bool = True) -> None:
        """Draw what one event sets: the status line, the progress bar, a chart's point
        (unless ``charts`` is off: a replay draws each chart at once)."""
        drawn = marks(event)
        if drawn.status is not None:
            self.query_one("#train-status", Static).update(drawn.status)
        if drawn.progress is not None:
            done, total = drawn.progress
            self.query_one("#train-progress", ProgressBar).update(
                total=total or None, progress=done
            )
        for point in drawn.points if charts else ():
            chart = self.query_one(f"#{point.chart}-chart", SeriesChart)
            chart.add_point(point.series, point.x, point.y)
