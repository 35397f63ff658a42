"""The Textual workbench: seven panes over the same core the headless CLI uses.

The app only wires panes together: which run's results the Samples pane shows, which
models the Translate and Attention panes use, and one handler for worker failures.
Screenshots and reports (F6, F7) are :mod:`.hand_in`'s; quitting around a run that
trains is :mod:`.quitting`'s.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Footer, Header, Input, TabbedContent, TabPane, Tabs

from workbench.core.config.run_config import RunConfig
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.layout import OutputFolder
from workbench.core.views.score_text import headline
from workbench.tui.hand_in import HandsIn
from workbench.tui.messages import (
    ForwardsWorkerFailures,
    OpenRun,
    RunFinished,
    ShowAttention,
    WorkerFailed,
)
from workbench.tui.quitting import QuitsAroundTraining
from workbench.tui.widgets.attention_pane import AttentionPane
from workbench.tui.widgets.dataset_pane import DatasetPane
from workbench.tui.widgets.lab_pane import LabPane
from workbench.tui.widgets.pane_tabs import PaneTabs
from workbench.tui.widgets.runs_pane import RunsPane
from workbench.tui.widgets.samples_pane import SamplesPane
from workbench.tui.widgets.training_pane import TrainingPane
from workbench.tui.widgets.translate_pane import TranslatePane

if TYPE_CHECKING:
    from workbench.core.translate.picked import PickSettings

W = TypeVar("W", bound=Widget)


PANES = ("dataset", "training", "samples", "translate", "attention", "lab", "runs")
#: Panes with an F-key of their own; F6 and F7 are Screenshot and Report, so the Lab and
#: the Runs pane have only their digits.
F_KEY_PANES = PANES[:5]
#: How a pane key asked (an action parameter): a digit, which a text field takes as typed,
#: and the F1 shown in the footer while a text field has the focus.
DIGIT, TYPING = "digit", "typing"
#: Below this width the footer drops the spaces between its keys, so that every pane's
#: keys fit in 80 columns.
COMPACT_FOOTER_BELOW = 100


class WorkbenchApp(QuitsAroundTraining, HandsIn, ForwardsWorkerFailures, App[int]):
    """Dataset · Training · Samples · Translate · Attention · Lab · Runs."""

    CSS_PATH = "app.tcss"
    # No auto focus: focusing a widget activates its pane, which at start-up can undo a
    # pane switch the user already made; on_mount focuses the first pane's table instead.
    AUTO_FOCUS = None
    TITLE = "workbench"
    BINDINGS = [
        # F1-F5 show a pane from anywhere; digits 1-7 too, except in a text field, where
        # check_action lets the digit through to be typed. While a text field has the
        # focus, the footer says how to get out: Escape, and F1-F5 (the first F1 binding,
        # shown only then; otherwise the plain one below it answers).
        Binding(
            "f1",
            f"show_pane('{PANES[0]}', '{TYPING}')",
            "Panes",
            key_display="f1–f5",
            priority=True,
        ),
        *(
            Binding(f"f{i}", f"show_pane('{name}')", name.title(), show=False, priority=True)
            for i, name in enumerate(F_KEY_PANES, 1)
        ),
        *(
            Binding(
                str(i), f"show_pane('{name}', '{DIGIT}')", name.title(), show=False, priority=True
            )
            for i, name in enumerate(PANES, 1)
        ),
        # Training keys live on the app so they work wherever focus is in that pane.
        Binding("s", "training('start')", "Start"),
        Binding("x", "training('stop')", "Stop"),
        Binding("r", "training('resume')", "Resume"),
        # Hand-in: an SVG of the screen into the newest run folder; the run report.
        # F6 stays in the footer; F7 and q are in the command palette (Ctrl-P), which
        # keeps the footer within 80 columns in every pane.
        Binding("f6,ctrl+s", "screenshot", "Screenshot", priority=True),
        Binding("f7,ctrl+r", "report", "Report", show=False, priority=True),
        Binding("escape", "leave_input", "Leave field"),
        Binding("q", "quit", "Quit", show=False),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        config: RunConfig,
        detached_runs: list[str] | None = None,
        qe_model: str | None = None,
        pick: PickSettings | None = None,
    ) -> None:
        """``detached_runs``: the ``tui`` flags the app was started with, when its runs
        train in processes of their own (a browser tab, which may close at any time);
        ``qe_model``: the Translate pane's reference-free scorer (``--qe``); ``pick``: how
        the Translate pane picks among candidates (``--pick``)."""
        super().__init__()
        self.config = config
        self.qe_model = qe_model
        self.pick = pick
        self.detached_runs = detached_runs
        #: Lines to print once the app has left the screen (where a handed-over run is).
        self.farewell: list[str] = []
        #: The terminal went away while this app's run trained: the process lives on.
        self.keeps_training = False
        self.handing_over = False
        self.training: TrainingPane | None = None  # mounted just after the first frame
        self.output_root = Path(config.output_dir).expanduser()
        tuned = OutputFolder(self.output_root).best_model
        self.tuned_model = str(tuned)
        self.base_model = None if config.is_scratch else config.model

    def compose(self) -> ComposeResult:
        """The Dataset pane, and the other panes' tabs, empty until after the first frame."""
        yield Header(show_clock=False)
        with PaneTabs(initial="dataset", id="panes"):
            with TabPane("1 Dataset", id="dataset"):
                yield DatasetPane(self.config)
            # The hidden panes start empty and are filled after the first frame
            # (_mount_hidden_panes): composing and styling them first delayed the first
            # screen by ~0.1 s and the footer and data by ~0.17 s (benchmarks/TUI.md).
            for i, name in enumerate(PANES[1:], 2):
                yield TabPane(f"{i} {name.title()}", id=name)
        yield Footer()

    def on_resize(self, event: events.Resize) -> None:
        """Compact the footer on a narrow terminal, so that every key still fits."""
        self.query_one(Footer).compact = event.size.width < COMPACT_FOOTER_BELOW

    def on_mount(self) -> None:
        """Focus the Dataset pane, catch SIGTERM and SIGHUP, then fill the hidden panes."""
        self.call_after_refresh(self._focus_pane, "dataset")
        self.catch_hangups()
        self.sub_title = f"{self.config.preset} · {self.output_root}"
        self.call_after_refresh(self._mount_hidden_panes)

    async def _mount_hidden_panes(self) -> None:
        training = self.training = TrainingPane(self.config, detached_runs=self.detached_runs)
        hidden = {
            "training": training,
            "samples": SamplesPane(),
            "translate": TranslatePane(
                self.tuned_model,
                self.base_model,
                OutputFolder(self.output_root).history,
                base_languages=self.config.direction_request(),
                qe_model=self.qe_model,
                pick=self.pick,
            ),
            "attention": AttentionPane(self.tuned_model),
            "lab": LabPane(self.tuned_model),
            "runs": RunsPane(self.output_root),
        }
        for name, pane in hidden.items():
            await self.query_one(f"TabPane#{name}", TabPane).mount(pane)
        from workbench.core.live.liveness import live_runs
        from workbench.core.run_folder.output_folder import latest_finished_run, run_folders

        # A live run first (another terminal's, a detached one, a sweep trial): attached.
        shown = [run for run, _ in live_runs(self.output_root)] or run_folders(self.output_root)
        if shown:
            training.show_when_read(shown[0])
        found = latest_finished_run(self.output_root)
        if found:
            run_dir, summary = found
            self._use_run(str(run_dir), summary)
        # A pane the user switched to before it was filled gets its focus now.
        active = self.query_one(TabbedContent).active
        if active in hidden and (self.focused is None or isinstance(self.focused, Tabs)):
            self._focus_pane(active)

    def _mounted(self, pane_class: type[W]) -> W | None:
        """A hidden pane, or None in the moment after start before it is mounted."""
        return next(iter(self.query(pane_class)), None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys a text field types are off in it, run keys outside Training; F-keys work
        always, and the keys that leave a text field are shown while one has the focus."""
        typing = isinstance(self.focused, Input)
        how = parameters[1] if len(parameters) > 1 else None
        if action == "leave_input" or (action == "show_pane" and how == TYPING):
            return typing
        if (action == "training" or (action == "show_pane" and how == DIGIT)) and typing:
            return False
        if action == "training":
            return self.query_one(TabbedContent).active == "training" and bool(
                self._mounted(TrainingPane)
            )
        return True

    def action_training(self, what: str) -> None:
        """Start, stop or resume the run in the Training pane."""
        getattr(self.query_one(TrainingPane), f"action_{what}")()

    def action_show_pane(self, name: str, how: str = "") -> None:
        """Switch pane and focus its first input or table, so its keys work at once
        (``how``, the key that asked, matters only to :meth:`check_action`)."""
        tabbed = self.query_one(TabbedContent)
        # Park focus on the tab bar first: if the focused widget's pane were hidden,
        # Textual would move focus itself, and focusing a widget in a pane activates it.
        tabbed.query_one(Tabs).focus()
        tabbed.active = name
        self.call_after_refresh(self._focus_pane, name)

    def _focus_pane(self, name: str) -> None:
        # A table or button first, so digits switch panes; a pane can ask otherwise.
        if self.query_one(TabbedContent).active != name:
            return  # the user has moved on since this was scheduled
        pane = self.query_one(f"TabPane#{name}")
        content = pane.children[0] if pane.children else pane
        order = getattr(content, "FOCUS_ORDER", ("DataTable", "Button", "VerticalScroll", "Input"))
        for selector in order:
            for widget in pane.query(selector):
                if widget.focusable:
                    widget.focus()
                    return

    def action_leave_input(self) -> None:
        """Escape: leave a text field so single-key shortcuts work again."""
        pane = self.query_one(f"TabPane#{self.query_one(TabbedContent).active}")
        for widget in pane.query("DataTable, Button, VerticalScroll"):
            if widget.focusable:
                widget.focus()
                return
        self.set_focus(None)

    def _use_run(self, run_dir: str, summary: RunSummary) -> None:
        self.query_one(SamplesPane).show_run(run_dir, summary)
        self.query_one(TranslatePane).set_models(summary.best_model, summary.base_model)
        if summary.best_model:
            self.query_one(AttentionPane).set_model(summary.best_model)
            self.query_one(LabPane).set_model(summary.best_model)

    @on(OpenRun)
    def _open_run(self, message: OpenRun) -> None:
        """A run chosen in the Runs pane: its results in Samples, its model in the others."""
        from workbench.core.live.liveness import run_liveness

        live = run_liveness(Path(message.run_dir))
        summary = live.summary
        if live.live:  # followed in the Training pane as it goes
            self.query_one(TrainingPane).show_run(Path(message.run_dir))
            self.action_show_pane("training")
            return
        if summary is None or live.status != "finished":
            status = live.status
            self.notify(
                f"{Path(message.run_dir).name} has no results to show (status: "
                f"{status}); open a finished run",
                title="Open run",
                markup=False,
            )
            return
        # Its own model: <output>/best_model holds whichever run was published last.
        own = summary.own_model()
        if own:
            summary = dataclasses.replace(summary, best_model=own)
        self._use_run(message.run_dir, summary)
        self.action_show_pane("samples")

    @on(RunFinished)
    def _run_finished(self, message: RunFinished) -> None:
        runs = self._mounted(RunsPane)
        if runs is not None:
            runs.refresh_runs()
        if message.status == "finished":
            self._use_run(message.run_dir, message.summary)
            scores = message.summary.test
            # markup=False: the headline holds user text (a --test-data file name).
            self.notify(
                headline(scores) if scores else "see the Samples pane",
                title="Run finished",
                markup=False,
            )
        elif message.status == "stopped":
            self.notify(
                "stopped with a checkpoint; press r in Training to resume", title="Run stopped"
            )
        else:
            self.notify(message.summary.error or "run failed", title="Run failed", severity="error")

    @on(ShowAttention)
    def _show_attention(self, message: ShowAttention) -> None:
        self.action_show_pane("attention")
        self.query_one(AttentionPane).show_sentence(message.sentence)

    @on(WorkerFailed)
    def _worker_failed(self, message: WorkerFailed) -> None:
        """The one place worker failures end up: shown, and the app keeps running."""
        error = message.error
        if message.group == "training":
            self.query_one(TrainingPane).worker_failed(error)
        self.notify(
            f"{type(error).__name__}: {error}" if error else "a task failed",
            title=f"{message.group or 'worker'} failed",
            severity="error",
            timeout=10,
        )
