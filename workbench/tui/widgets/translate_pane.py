"""Translate pane: type a sentence, see the fine-tuned and/or base model's translation.

A row appears the moment Enter is pressed ("translating…", "(loading the model)" the
first time) and is filled in place (:mod:`.translation_table`); sentences typed while one
translates wait in a queue that one worker drains in order. The work is a
:class:`workbench.core.translate.console_session.ConsoleSession`, as ``workbench
interact``'s is (models load lazily, once each; every result and judgement is appended to
the console history file as it happens): the pane reads keys and draws. The input keeps
the focus: digits are typed (F1-F5 switch panes), ↑/↓ pick a row, ``:judge …`` judges it;
Escape leaves the input for the single-key shortcuts. Like the console, it uses a
CTranslate2 export of a model when an up-to-date one exists, says so when the model
loads, and marks those rows "ct2".

Started with ``workbench tui --pick …`` (the console's picking flags), every line is
picked among its candidates, as ``interact --pick`` picks: the row is marked », and the
candidates, their scores and counts, and the metric "(used to pick)" are listed under
the table. Ctrl-B switches between the pick and one beam search, so that a user can set
the two side by side on the same sentence; the hint under the input says which is on.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from workbench.core.config.direction_request import DirectionRequest
from workbench.core.translate.console_session import (
    ConsoleAnswer,
    ConsoleModel,
    ConsoleSession,
    side_quality,
)
from workbench.core.translate.judgements import (
    Judgement,
    is_judge_command,
    parse_judgement,
)
from workbench.core.translate.picked import PickSettings
from workbench.errors import WorkbenchError, failure_text
from workbench.tui.messages import ForwardsWorkerFailures, ShowAttention, checked
from workbench.tui.widgets.translate_options import TranslateOptions
from workbench.tui.widgets.translate_rows import (
    CHOICES,
    KEYS_HINT,
    SWITCH_KEY,
    Entry,
    Job,
    detail_text,
    typing_hint,
)
from workbench.tui.widgets.translation_table import TranslationTable


class TranslatePane(ForwardsWorkerFailures, Vertical):
    """An input line and a history of translations with timings and judgements."""

    FOCUS_ORDER = ("Input#translate-input",)  # typing is what this pane is for
    BINDINGS = [
        Binding("ctrl+t", "open_attention", "Attention"),
        Binding("up", "move(-1)", "Row up", show=False),
        Binding("down", "move(1)", "Row down", show=False),
        Binding("g", "judge('good')", "Good"),
        Binding("o", "judge('omission')", "Omission"),
        Binding("e", "judge('error')", "Error"),
        Binding("slash", "focus_input", "Type", show=False),
        Binding("ctrl+l", "clear", "Clear", show=False),
        Binding(SWITCH_KEY, "switch_pick", "Pick/beam", show=False),
    ]

    @dataclass
    class Translated(Message):
        """One line translated by one model (posted from the worker)."""

        key: str
        answer: ConsoleAnswer

    @dataclass
    class Loaded(Message):
        """A model was loaded: which engine translates with it, and any notices."""

        model: str
        backend: str
        notices: list[str]

    @dataclass
    class Failed(Message):
        """A model could not be loaded or the line could not be translated."""

        key: str
        error: str

    def __init__(
        self,
        tuned_model: str,
        base_model: str | None,
        history: Path,
        base_languages: DirectionRequest | None = None,
        qe_model: str | None = None,
        pick: PickSettings | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.pick = pick  # tui --pick: both models pick the same way
        self.picking = pick is not None  # Enter picks (Ctrl-B: one beam search instead)
        # The base model decodes in the run's direction, as the "before" side did; a saved
        # model in its own (its workbench.json).
        base = (
            ConsoleModel(base_model, base_languages or DirectionRequest(), pick=pick)
            if base_model
            else None
        )
        tuned = ConsoleModel(tuned_model, pick=pick) if tuned_model else None
        # tui --qe: each translation scored without a reference (loaded on first use)
        quality = side_quality(qe_model, pick)
        self.session = ConsoleSession({"tuned": tuned, "base": base}, history, quality)
        self.table = TranslationTable(quality is not None, id="translate-history")
        self._jobs: deque[Job] = deque()
        self._jobs_lock = threading.Lock()
        self._draining = False  # a worker is taking jobs off the queue
        self._next_row = 0

    def compose(self) -> ComposeResult:
        """The model, beams and length fields, the sentence field, the history and the detail."""
        yield TranslateOptions(id="translate-options")
        yield Input(placeholder="Type an English sentence and press Enter", id="translate-input")
        yield Static(Text(self._typing_hint()), id="translate-hint")
        yield self.table
        yield Static("", id="translate-detail")

    @property
    def entries(self) -> dict[str, Entry]:
        """The rows' entries by row key, in table order."""
        return self.table.entries

    @property
    def pending(self) -> int:
        """Rows still waiting for their translation."""
        return self.table.pending

    def set_models(self, tuned: str | None = None, base: str | None = None) -> None:
        """Point at new models (after a run); loaded again on next use."""
        if tuned:
            self.session.set_model("tuned", ConsoleModel(tuned, pick=self.pick))
        known = self.session.models["base"]
        if base and (known is None or base != known.name):
            # e.g. a scratch run's initial model: decoded in its own direction
            self.session.set_model("base", ConsoleModel(base, pick=self.pick))

    # ------------------------------------------------------------------ typing a line

    @on(Input.Submitted, "#translate-input")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value
        if not text.strip():
            return
        if is_judge_command(text):
            judgement = checked(self.app, "Judge", lambda: parse_judgement(text))
            if judgement is not None and self.judge(judgement):
                event.input.value = ""
            return
        options = self.query_one(TranslateOptions)
        overrides = checked(self.app, "Translate", options.overrides)
        if overrides is None:
            return
        event.input.value = ""
        for model in options.models():
            self._add_row(Job(f"row-{self._next_row}", text, model, overrides, self.picking))
            self._next_row += 1

    def _add_row(self, job: Job) -> None:
        """Show the row now, and queue its translation."""
        entry = Entry(job.key, job.model, job.text)
        self.table.add_entry(entry, loading=not self.session.is_loaded(job.model))
        with self._jobs_lock:
            self._jobs.append(job)
            start, self._draining = not self._draining, True
        if start:
            self.translate_queued()

    @work(thread=True, exit_on_error=False, group="translate")
    def translate_queued(self) -> None:
        """Translate the queued lines in order, until the queue is empty."""
        while True:
            with self._jobs_lock:
                if not self._jobs:
                    self._draining = False
                    return
                job = self._jobs.popleft()
            try:
                self._translate(job)
            except Exception as err:  # one bad line must never stop the queue
                self.post_message(self.Failed(job.key, failure_text(err)))

    def _translate(self, job: Job) -> None:
        """Load the model once and translate one line (on the worker's thread)."""
        try:
            fresh = not self.session.is_loaded(job.model)
            translator = self.session.load(job.model)
            if fresh:
                self.post_message(
                    self.Loaded(job.model, translator.backend_label, translator.notices)
                )
            answer = self.session.translate(job.text, job.model, job.overrides, job.picked)
        except WorkbenchError as err:
            self.post_message(self.Failed(job.key, str(err)))
            return
        if answer.quality_problem:  # the row shows no score; why, once, in a toast
            said = "QE is off" if answer.quality_off else "no QE score for that line"
            self.post_message(self.Failed("", f"{said}: {answer.quality_problem}"))
        if answer.history_problem:  # the row shows the translation; it cannot be judged
            self.post_message(self.Failed("", f"that line is {answer.history_problem}"))
        self.post_message(self.Translated(job.key, answer))

    # ------------------------------------------------------------------ results

    @on(Translated)
    def _translated(self, message: Translated) -> None:
        self.table.show_answer(message.key, message.answer)
        self._show_detail()  # the notices in full: the row says ⚠, not a toast per row

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        # Paths can hold brackets: no markup.
        model = {key: label for label, key in CHOICES}.get(message.model, message.model)
        self.app.notify(f"{model} model: {message.backend}", title="Translate", markup=False)
        for notice in message.notices:
            self.app.notify(notice, title="Translate", severity="warning", timeout=10, markup=False)

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        if self.table.show_failure(message.key, message.error):
            self._show_detail()
        self.app.notify(message.error, title="Translate", severity="error", timeout=8, markup=False)

    # ------------------------------------------------------------------ the highlighted row

    def highlighted(self) -> Entry | None:
        """The entry of the highlighted row, or None when the history is empty."""
        return self.table.highlighted()

    @on(DataTable.RowHighlighted, "#translate-history")
    def _show_detail(self) -> None:
        """The highlighted row in full: source, translation, notices, judgement."""
        entry = self.highlighted()
        detail = self.query_one("#translate-detail", Static)
        width = max(40, detail.size.width - 2)  # inside its padding
        detail.update(detail_text(entry, width) if entry is not None else Text())

    def _typing_hint(self) -> str:
        return typing_hint(self.pick.described if self.pick else None, self.picking)

    @on(events.DescendantFocus)
    def _say_keys(self, event: events.DescendantFocus) -> None:
        typing = isinstance(event.widget, Input)
        hint = self._typing_hint() if typing else KEYS_HINT
        self.query_one("#translate-hint", Static).update(Text(hint))

    def action_switch_pick(self) -> None:
        """Ctrl-B: the next lines picked among candidates, or by one beam search."""
        if self.pick is None:
            self.app.notify(
                "start workbench tui with --pick qe or --pick mbr to pick among candidates",
                title="Translate",
                markup=False,
            )
            return
        self.picking = not self.picking
        self.query_one("#translate-hint", Static).update(Text(self._typing_hint()))

    def action_move(self, delta: int) -> None:
        """↑/↓ while typing: move the highlight without leaving the input."""
        self.table.move(delta)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The judging and focus keys are off in the input, where they are typed."""
        # In the input these letters are typed; ``:judge`` does the same there.
        return not (action in ("judge", "focus_input") and isinstance(self.app.focused, Input))

    def action_judge(self, verdict: str) -> None:
        """g / o / e: judge the highlighted row (a note: type ``:judge VERDICT NOTE``)."""
        self.judge(Judgement(verdict))

    def judge(self, judgement: Judgement) -> bool:
        """Record a judgement of the highlighted row in the history; whether it was."""
        entry = self.highlighted()
        if entry is None or entry.line_id is None:
            self.app.notify(
                "nothing to judge yet: highlight a translated row", title="Judge", markup=False
            )
            return False
        self.session.judge(judgement, entry.line_id)
        self.table.show_judgement(entry, judgement)
        self._show_detail()
        return True

    def action_focus_input(self) -> None:
        """/: into the sentence field, to translate another line."""
        self.query_one("#translate-input", Input).focus()

    def action_open_attention(self) -> None:
        """Ctrl-T: the highlighted row's sentence in the Attention pane."""
        entry = self.highlighted()
        if entry is not None:
            self.post_message(ShowAttention(entry.source))

    def action_clear(self) -> None:
        """Ctrl-L: empty the table (the history file keeps every line)."""
        self.table.forget_rows()
        self._show_detail()
