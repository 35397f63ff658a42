"""Lab pane: the decoding, KV-cache and attention-kinds studies of ``workbench lab``.

Each study is the core function the command calls (:mod:`workbench.core.lab`), run on a
worker thread; the worker reports progress and its result as messages and never touches
a widget. The result is shown in the command's own wording (:mod:`workbench.core.lab.text`)
and saved as the same JSON in the model's run folder, so pane, command and report agree.
Stop sets a ``threading.Event`` the study checks between two decodes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Input, Label, ProgressBar, Static

from workbench.errors import WorkbenchError
from workbench.tui.messages import ForwardsWorkerFailures

if TYPE_CHECKING:
    from workbench.core.lab.attention_kinds import AttentionKinds
    from workbench.core.lab.decoding_strategies import DecodingStudy
    from workbench.core.lab.kv_cache import CacheStudy
    from workbench.core.lab.prompt_attention import PromptAttention
    from workbench.core.lab.run_study import StudyKind

#: The studies in button order, with what each measures (shown when chosen).
STUDIES: dict[StudyKind, str] = {
    "decoding": "greedy, beams and sampling on the run's test set: BLEU, intervals, time",
    "cache": "time per token with and without the KV cache, its size against the formula",
    "attention": "encoder self-, masked decoder self- and cross-attention of one sentence",
}
#: The three attention kinds in the order ``AttentionKinds.kinds`` gives them.
KIND_NAMES = ("encoder self", "decoder self", "cross")
DEFAULT_LIMIT = 200
DEFAULT_SENTENCE = "I like to drink tea."


class LabPane(ForwardsWorkerFailures, Vertical):
    """Run one study of the Lab, watch its progress, read its table and chart."""

    # Buttons first: digits then still switch panes and the study keys work at once.
    FOCUS_ORDER = ("Button",)
    BINDINGS = [
        Binding(key, action, label)
        for key, action, label in (
            *((name[0], f"study('{name}')", name.title()) for name in STUDIES),
            ("g", "run", "Run"),
            ("x", "stop", "Stop"),
            ("k", "kind", "Kind"),
        )
    ]

    @dataclass
    class Progress(Message):
        """A study reached step ``done`` of ``total`` (posted from the worker)."""

        name: str
        done: int
        total: int

    @dataclass
    class Finished(Message):
        """A study ended: its result and text, where it was saved, or why it failed."""

        study: str
        result: DecodingStudy | CacheStudy | AttentionKinds | PromptAttention | None
        text: str | None
        saved: Path | None
        error: str | None

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model_name = model
        self.study: StudyKind = "decoding"
        self.stop_flag = threading.Event()
        self.running = False
        #: The last finished study's result.
        self.result: DecodingStudy | CacheStudy | AttentionKinds | PromptAttention | None = None
        self.shown: str | None = None  # which study ``result`` belongs to
        self.kind_index = 2  # cross-attention first: the one `workbench attention` shows
        self.saved: Path | None = None
        self._text: str | None = None  # decoding and cache: the command's printed text
        self.finished = 0  # studies ended (done, stopped or failed): what tests wait for

    def compose(self) -> ComposeResult:
        """The study buttons, the limit, Run and Stop, the sentence, the progress and the result."""
        with Horizontal(id="lab-buttons"):
            for name in STUDIES:
                yield Button(f"{name.title()} ({name[0]})", id=f"lab-{name}", classes="lab-study")
            yield Label("limit:")
            yield Input(
                str(DEFAULT_LIMIT), id="lab-limit", classes="setting", compact=True, type="integer"
            )
            yield Button("Run (g)", id="lab-run", variant="success")
            yield Button("Stop (x)", id="lab-stop", variant="error", disabled=True)
        yield Input(
            DEFAULT_SENTENCE,
            placeholder="Sentence for the attention study",
            id="lab-sentence",
            compact=True,
        )
        with Horizontal(id="lab-progress-row"):
            yield ProgressBar(total=1, id="lab-progress", show_eta=False)
            yield Static("", id="lab-status")
        with VerticalScroll(id="lab-view"):
            yield Static(Text("Choose a study (d, c, a) and press Run (g)."), id="lab-result")

    def on_mount(self) -> None:
        """Show which study Run starts: decoding, until another is chosen."""
        self._choose(self.study)

    def set_model(self, model: str) -> None:
        """Use another model (a finished run's best model) from the next study on."""
        self.model_name = model

    # ------------------------------------------------------------------ keys and buttons

    def action_study(self, name: str) -> None:
        """Choose which study Run starts."""
        if not self.running and name in STUDIES:
            self._choose(name)

    def _choose(self, name: StudyKind) -> None:
        self.study = name
        for button in self.query(".lab-study").results(Button):
            button.variant = "primary" if button.id == f"lab-{name}" else "default"
        self._status(Text(f"{name}: {STUDIES[name]}"))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        button = event.button.id or ""
        if button == "lab-run":
            self.action_run()
        elif button == "lab-stop":
            self.action_stop()
        elif button.startswith("lab-"):
            self.action_study(button.removeprefix("lab-"))

    @on(Input.Submitted, "#lab-sentence")
    def _sentence_submitted(self) -> None:
        self.action_study("attention")
        self.action_run()

    def action_run(self) -> None:
        """Read the settings and start the chosen study on the worker."""
        if self.running:
            return
        limit_text = self.query_one("#lab-limit", Input).value.strip()
        try:
            limit = int(limit_text)  # the study itself refuses a limit under 1
        except ValueError:
            if self.study == "decoding":
                self._status(
                    Text(f"the limit must be a whole number, got {limit_text!r}", style="red")
                )
                return
            limit = DEFAULT_LIMIT  # not used by the other studies
        sentence = " ".join(self.query_one("#lab-sentence", Input).value.split())
        if self.study == "attention" and not sentence:
            self._status(
                Text(
                    f"empty sentence: type the text to look at, e.g. {DEFAULT_SENTENCE}",
                    style="red",
                )
            )
            return
        self.stop_flag.clear()
        self._set_running(True)
        bar = self.query_one("#lab-progress", ProgressBar)
        bar.update(total=None if self.study == "attention" else 1, progress=0)
        self._status(Text(f"{self.study}: starting on {self.model_name}…"))
        self.run_study(self.study, self.model_name, limit, sentence)

    def action_stop(self) -> None:
        """Ask the study to end after its current decode."""
        if self.running:
            self.stop_flag.set()
            self._status(Text(f"{self.study}: stopping after the current step…"))

    def action_kind(self) -> None:
        """Show the next kind of attention (encoder self → decoder self → cross)."""
        if self.shown == "attention" and self.result is not None:
            self.kind_index = (self.kind_index + 1) % len(KIND_NAMES)
            self._render_result()

    def _set_running(self, running: bool) -> None:
        self.running = running
        self.query_one("#lab-run", Button).disabled = running
        self.query_one("#lab-stop", Button).disabled = not running

    def _status(self, text: Text) -> None:
        self.query_one("#lab-status", Static).update(text)

    # ------------------------------------------------------------------ the worker

    @work(thread=True, exclusive=True, exit_on_error=False, group="lab")
    def run_study(self, study: StudyKind, model: str, limit: int, sentence: str) -> None:
        """Run one study as ``workbench lab`` does and post its result (never widgets)."""

        def progress(name: str, done: int, total: int) -> None:
            self.post_message(self.Progress(name, done, total))

        from workbench.core.lab.run_study import StudyOptions, run_study
        from workbench.core.lab.text import study_text

        try:
            if not Path(model).is_dir():
                raise WorkbenchError(
                    f"no fine-tuned model at {model} yet: train one in the Training pane first"
                )
            run = run_study(
                study,
                model,
                StudyOptions(limit=limit, sentence=sentence),
                on_progress=progress,
                stop=self.stop_flag,
            )
            result, text, saved = run.result, study_text(run.result), run.saved
        except WorkbenchError as err:
            self.post_message(self.Finished(study, None, None, None, str(err)))
            return
        self.post_message(self.Finished(study, result, text, saved, None))

    @on(Progress)
    def _progress(self, message: Progress) -> None:
        bar = self.query_one("#lab-progress", ProgressBar)
        bar.update(total=max(1, message.total), progress=message.done)
        self._status(Text(f"{self.study}: {message.done}/{message.total} · {message.name}"))

    @on(Finished)
    def _finished(self, message: Finished) -> None:
        self._set_running(False)
        self.finished += 1
        bar = self.query_one("#lab-progress", ProgressBar)
        if message.error:
            bar.update(total=1, progress=0)
            # One line: the app stays up and the user reads why.
            self._status(Text(message.error.splitlines()[0], style="red"))
            return
        bar.update(total=1, progress=1)
        self.result, self.shown, self.saved = message.result, message.study, message.saved
        self._text = message.text
        self._render_result()

    def _render_result(self) -> None:
        """Draw the finished study: its text, or the chosen attention kind and head table."""
        from workbench.core.lab.attention_kinds import AttentionKinds
        from workbench.core.lab.text import heads_text, kinds_lines
        from workbench.terminal import to_rich

        where = f"saved {self.saved}" if self.saved is not None else "not saved (no run folder)"
        if isinstance(self.result, AttentionKinds):  # the attention study's
            width = max(40, self.size.width - 4)
            body = to_rich(kinds_lines(self.result, width, colour=True, only=self.kind_index))
            body.append("\n\n" + heads_text(self.result))
            self._status(Text(f"{KIND_NAMES[self.kind_index]} (k: next) · {where}"))
        else:
            body = Text(self._text or "", no_wrap=True, overflow="ignore")
            self._status(Text(f"{self.shown}: finished · {where}"))
        self.query_one("#lab-result", Static).update(body)
