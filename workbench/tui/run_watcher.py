"""The Training pane's work without the pane: the run it shows, where that run comes from,
starting and stopping it, and following it as it grows.

A plain object a test drives without Textual (toolong's pattern: the work is an object,
the widget draws what it reports). The run shown comes from one of four sources:

- **local**: this app's own run, :func:`~workbench.core.train.run_training.run_training`
  on a thread (:meth:`RunWatcher.train`, which the pane runs as its worker), as ``train
  --headless`` runs it. Stop sets the run's ``threading.Event``: the trainer ends after the
  current step with a checkpoint.
- **detached**: a run started in a process of its own (:meth:`RunWatcher.start_detached`:
  Start in a browser tab, which may close at any time), then attached.
- **attached**: a run another process writes, followed (:meth:`RunWatcher.follow`, every
  :data:`FOLLOW_SECONDS`) with the settings it was started with until its writer lets go.
  Stop leaves it a stop request, the only thing a viewer may write.
- **replay**: a recorded run read back at once (:meth:`RunWatcher.show`): its log, its
  charts' series and the events the status line and the progress bar end on.

What a run's events draw is :mod:`workbench.tui.run_drawing`'s. Reading a run folder as
it grows, and whether its writer lives, is the core's
(:meth:`~workbench.core.live.follow.RunReader.look`), which ``workbench logs --follow``
reads through too. The watcher sits in the TUI and not in the core: it starts runs (the
train package, above ``live`` in the core's chain) and holds one front end's session,
which no command has. An import-linter contract keeps Textual and Rich out of it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from workbench.core.config.run_config import RunConfig
from workbench.core.config.settings import flag_name
from workbench.core.events import Event, EventSink, RunDone
from workbench.core.live.follow import RunReader, followed_events
from workbench.core.live.liveness import Liveness
from workbench.core.live.stop_request import request_stop
from workbench.core.run_folder.layout import RunFolder
from workbench.core.run_folder.saved_config import started_settings
from workbench.core.views.event_text import EventText
from workbench.tui.run_drawing import Series, last_drawn, replayed_series

#: The lines the pane's log keeps (a replay shows a run's last ones).
LOG_LINES = 1000
#: Seconds between two looks at an attached run's new events (the view lags by about this).
FOLLOW_SECONDS = 1.0
#: How long Start or Resume waits for the last run's worker to let go of its folder.
FOLDER_LET_GO_SECONDS = 10.0


@dataclass(frozen=True)
class Shown:
    """A run read back to be shown: its log's last lines, the events the status line and
    the progress bar end on, its charts' series, its status and the settings it started
    with (its config.json's, else the pane's)."""

    run_dir: Path
    lines: list[str]
    last_events: list[Event]
    loss: Series
    scores: Series
    live: Liveness
    settings: RunConfig
    #: The attached run the watcher stopped following to show this one (it trains on).
    left: Path | None


@dataclass(frozen=True)
class Followed:
    """What a look at the attached run found: its new log lines and events, its status,
    whether that status changed, and whether it ended (then the watcher has let it go)."""

    run_dir: Path
    lines: list[str]
    events: Sequence[Event]
    live: Liveness
    status_changed: bool

    @property
    def ended(self) -> bool:
        """Whether the run's writer is gone: nothing more comes, and it is let go."""
        return not self.live.live


class RunWatcher:
    """The run the Training pane trains or shows, from whichever source (see the module)."""

    def __init__(self, detached_runs: list[str] | None = None) -> None:
        #: The flags a detached run is started with, when Start starts one (a browser tab).
        self.detached_runs = detached_runs
        self.stop_flag = threading.Event()
        #: Whether this app's own run trains (local).
        self.running = False
        #: The status of the run shown, and the folder of this app's last own run.
        self.last_status: str | None = None
        self.last_run_dir: Path | None = None
        #: The run another process writes, followed (attached).
        self.attached: RunReader | None = None
        self.shows = 0  # runs shown so far: a late start-up replay must not replace one
        #: Clear while this app's training thread runs (the app waits on it when its
        #: terminal went away mid-run).
        self.training_done = threading.Event()
        self.training_done.set()
        self.text = EventText()
        #: Whether the log is the events' lines (a run with a train.log shows its own).
        self.lines_from_events = True

    # ------------------------------------------------------------------ starting

    def ready(self) -> bool:
        """Whether a run may start: none of this app's trains, and the last one's thread
        has let go of its folder. Its RunDone arrives just before that: a Resume pressed
        at once waits those milliseconds instead of being refused."""
        return not self.running and self.training_done.wait(timeout=FOLDER_LET_GO_SECONDS)

    def begin(self) -> bool:
        """A new run starts, and the last one is forgotten. Returns whether it trains here
        (a local run, with a stop flag of its own and the events' lines as its log) rather
        than in a process of its own."""
        self.last_status = self.last_run_dir = None
        if self.detached_runs is not None:
            return False
        self.stop_flag = threading.Event()
        self.running = True
        self.text = EventText()  # a new run: no "before" scores yet
        self.lines_from_events = True
        return True

    def train(self, config: RunConfig, resume: bool, sink: EventSink) -> None:
        """Run the local run to its end (on the pane's worker thread); its events go to
        ``sink``, which hands them to the main thread, where :meth:`took` takes them."""
        from workbench.core.train.run_training import run_training

        self.training_done.clear()
        try:
            run_training(config, sink, self.stop_flag, resume=resume)
        finally:
            self.training_done.set()

    def took(self, event: Event) -> list[str]:
        """The log lines of the local run's ``event``, as ``train --headless`` prints
        them; a RunDone ends the run."""
        if isinstance(event, RunDone):
            self.running = False
            self.last_status = event.status
            self.last_run_dir = Path(event.run_dir)
        return self._lines([event])

    def failed(self) -> None:
        """The local run's thread (or a detached start) raised: nothing trains here."""
        self.running = False
        self.last_status = "failed"

    def start_detached(self, config: RunConfig, resume: bool, edited: Iterable[str]) -> Path:
        """Start the run in a process of its own, which outlives this app, with the flags
        the app was given and the ``edited`` settings' values; returns its folder once
        that process holds it (off the main thread: it takes a second or two)."""
        from workbench.core.live.detach import start_detached_run
        from workbench.core.run_folder.output_folder import new_run_dir
        from workbench.core.train.checkpoints import run_to_resume

        settings = [f"{flag_name(field)}={getattr(config, field)}" for field in edited]
        args = [*(self.detached_runs or []), *settings, *(["--resume"] if resume else [])]
        root = Path(config.output_dir).expanduser()
        run_dir = run_to_resume(root) if resume else new_run_dir(root, config.preset)
        start_detached_run(args, run_dir)
        return run_dir

    # ------------------------------------------------------------------ stopping

    def stop(self) -> str | None:
        """Stop the run: an attached one by a request left in its folder (its writer stops
        at its next step), the local one after this step, with a checkpoint either way.
        The line that says so, or None with nothing to stop; a run that cannot be asked
        raises :class:`~workbench.errors.WorkbenchError`."""
        if self.attached is not None and not self.running:
            run_dir = self.attached.run_dir
            live = request_stop(run_dir, "a workbench tui")
            return (
                f"stop requested: {run_dir.name} ({live.why()}) stops after its next step, "
                "with a checkpoint"
            )
        if self.running and not self.stop_flag.is_set():
            self.stop_flag.set()
            return "stopping after this step (a checkpoint is written)…"
        return None

    # ------------------------------------------------------------------ showing

    @staticmethod
    def read_ahead(run_dir: Path) -> None:
        """Read a run's metrics.jsonl into the shared cache, off the main thread: a run of
        300,000 logged steps takes seconds to parse, and :meth:`show` then finds it read."""
        followed_events(RunFolder(run_dir).metrics)

    def show(self, run_dir: Path, config: RunConfig) -> Shown | None:
        """Read a run back to show it (replay); a live one is then followed (attached).
        None while the local run trains: it stays shown. ``config`` is what a run whose
        config.json does not read is shown with."""
        if self.running:
            return None
        self.shows += 1
        left = self.let_go()
        self.text = EventText()
        reader = RunReader(run_dir)
        look = reader.look()
        # The log is the run's train.log where it has one (every line headless prints,
        # notes and warnings too); metrics.jsonl, the numbers, draws the rest.
        self.lines_from_events = not reader.has_log()
        lines = [*look.lines, *self._lines(look.events)]
        if look.live.live:
            self.attached = reader
        self.last_status = look.live.status
        loss, scores = replayed_series(look.events)
        return Shown(
            run_dir=run_dir,
            lines=lines[-LOG_LINES:],
            last_events=last_drawn(look.events),
            loss=loss,
            scores=scores,
            live=look.live,
            settings=started_settings(run_dir, config),
            left=left,
        )

    def follow(self) -> Followed | None:
        """What the attached run wrote since the last look (None with none attached); a
        run whose writer has gone is let go."""
        reader = self.attached
        if reader is None:
            return None
        self.lines_from_events = self.lines_from_events and not reader.has_log()
        look = reader.look()
        changed = look.live.status != self.last_status
        self.last_status = look.live.status
        if look.ended:
            self.attached = None
        lines = [*look.lines, *self._lines(look.events)]
        return Followed(
            run_dir=reader.run_dir,
            lines=lines,
            events=look.events,
            live=look.live,
            status_changed=changed,
        )

    def let_go(self) -> Path | None:
        """Stop following the attached run (it goes on); its folder, or None if none was."""
        reader, self.attached = self.attached, None
        return reader.run_dir if reader is not None else None

    def _lines(self, events: Sequence[Event]) -> list[str]:
        """The events' lines, where they are the log (a run without a train.log)."""
        if not self.lines_from_events:
            return []
        return [line for event in events for line in self.text.lines(event)]
