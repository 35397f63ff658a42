"""Translate pane: type a sentence, see the fine-tuned and/or base model's translation.

A row appears the moment Enter is pressed ("translating…", "(loading the model)" the
first time) and is filled in place; sentences typed while one translates wait in a queue
that one worker drains in order. Translation runs with the same :class:`Translator` as
``workbench interact`` (models load lazily, once each) and every result is appended to
the console history file as it happens. The input keeps the focus: digits are typed
(F1-F5 switch panes), ↑/↓ pick a row, ``:judge …`` judges it; Escape leaves the input
for the single-key shortcuts. Like the console, it uses a CTranslate2 export of a model
when an up-to-date one exists, says so when the model loads, and marks those rows "ct2".
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable, Input, Label, Select, Static

from workbench.core.translate.judgements import (
    Judgement,
    is_judge_command,
    parse_judgement,
)
from workbench.core.translate.quality import QualityEstimator
from workbench.errors import WorkbenchError
from workbench.tui.messages import ForwardsWorkerFailures, ShowAttention, checked
from workbench.tui.widgets.translate_rows import (
    CHOICES,
    JUDGED_WIDTH,
    KEYS_HINT,
    LOADING,
    MODEL_WIDTH,
    MS_WIDTH,
    QE_WIDTH,
    SOURCE_SHARE,
    TYPING_HINT,
    WAITING,
    Entry,
    Job,
    checked_overrides,
    cut,
    detail_text,
)

if TYPE_CHECKING:
    from workbench.core.config.direction_request import DirectionRequest
    from workbench.core.translate.translator import Translator


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
    ]

    @dataclass
    class Translated(Message):
        """One line translated by one model (posted from the worker)."""

        key: str
        text: str
        seconds: float
        notices: list[str]
        line_id: str
        engine: str = ""
        quality: float | None = None  # its QE score (tui --qe)

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
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # tui --qe: each translation scored without a reference (loaded on first use)
        self.quality = QualityEstimator(qe_model) if qe_model else None
        self.models = {"tuned": tuned_model, "base": base_model}
        # The base model decodes in the run's direction, as the "before" side did; a saved
        # model in its own (its workbench.json).
        self.languages: dict[str, DirectionRequest | None] = {
            "tuned": None,
            "base": base_languages,
        }
        self.history = history
        self._translators: dict[str, Translator] = {}
        self.entries: dict[str, Entry] = {}  # by row key, in table order
        self._jobs: deque[Job] = deque()
        self._jobs_lock = threading.Lock()
        self._draining = False  # a worker is taking jobs off the queue
        self._next_row = 0

    def compose(self) -> ComposeResult:
        """The model, beams and length fields, the sentence field, the history and the detail."""
        with Horizontal(id="translate-options"):
            yield Label("model:")
            yield Select(
                CHOICES, value="tuned", allow_blank=False, id="translate-model", compact=True
            )
            # Empty: the model's own settings, as `workbench translate` uses them.
            yield Label("beams:")
            yield Input(
                "",
                placeholder="model",
                id="translate-beams",
                classes="setting",
                type="integer",
                compact=True,
            )
            yield Label("max new:")
            yield Input(
                "",
                placeholder="model",
                id="translate-max",
                classes="setting",
                type="integer",
                compact=True,
            )
        yield Input(placeholder="Type an English sentence and press Enter", id="translate-input")
        yield Static(Text(TYPING_HINT), id="translate-hint")
        yield DataTable(id="translate-history", cursor_type="row", zebra_stripes=True)
        yield Static("", id="translate-detail")

    def on_mount(self) -> None:
        """Add the history table's columns, sized to the terminal's width."""
        # Fixed shares of the width, so the translation shows at 80 columns; the
        # highlighted row is shown in full below the table.
        width = max(70, self.app.size.width - 4)
        columns = 5 + (self.quality is not None)
        scores = QE_WIDTH if self.quality is not None else 0
        text = width - MODEL_WIDTH - MS_WIDTH - scores - JUDGED_WIDTH - 2 * columns  # padding
        self.source_width = int(text * SOURCE_SHARE)
        self.translation_width = text - self.source_width
        table = self.query_one(DataTable)
        table.add_column("model", width=MODEL_WIDTH, key="model")
        table.add_column("source", width=self.source_width, key="source")
        table.add_column("translation", width=self.translation_width, key="translation")
        table.add_column("ms", width=MS_WIDTH, key="ms")
        if self.quality is not None:
            table.add_column("QE", width=QE_WIDTH, key="qe")
        table.add_column("judged", width=JUDGED_WIDTH, key="judged")

    def set_models(self, tuned: str | None = None, base: str | None = None) -> None:
        """Point at new models (after a run); loaded again on next use."""
        if tuned:
            self.models["tuned"] = tuned
            self._translators.pop("tuned", None)
        if base and base != self.models["base"]:
            self.models["base"] = base
            self.languages["base"] = None  # e.g. a scratch run's initial model: its own
            self._translators.pop("base", None)

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
        beams, length = (
            self.query_one(f, Input).value for f in ("#translate-beams", "#translate-max")
        )
        overrides = checked(self.app, "Translate", lambda: checked_overrides(beams, length))
        if overrides is None:
            return
        event.input.value = ""
        choice = self.query_one("#translate-model", Select).value
        for model in ["tuned", "base"] if choice == "both" else [str(choice)]:
            self._add_row(Job(f"row-{self._next_row}", text, model, overrides))
            self._next_row += 1

    def _add_row(self, job: Job) -> None:
        """Show the row now, and queue its translation."""
        self.entries[job.key] = Entry(job.key, job.model, job.text)
        waiting = WAITING if job.model in self._translators else LOADING
        table = self.query_one(DataTable)
        empty = [""] * (2 + (self.quality is not None))  # ms, QE, judged
        table.add_row(
            job.model,
            cut(job.text, self.source_width),
            Text(waiting, style="italic"),
            *empty,
            key=job.key,
        )
        table.move_cursor(row=table.row_count - 1)
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
                self.post_message(self.Failed(job.key, f"{type(err).__name__}: {err}"))

    def _translate(self, job: Job) -> None:
        """Load the model once and translate one line (on the worker's thread)."""
        from workbench.core.translate.history import append_history
        from workbench.core.translate.translator import Translator

        name = self.models.get(job.model)
        if not name:
            self.post_message(self.Failed(job.key, f"no {job.model} model yet: train one first"))
            return
        try:
            translator = self._translators.get(job.model)
            if translator is None:
                translator = Translator.from_pretrained(name, request=self.languages[job.model])
                self._translators[job.model] = translator
                self.post_message(
                    self.Loaded(job.model, translator.backend_label, translator.notices)
                )
            options = translator.default_options().overridden(*job.overrides)
            item = translator.translate(job.text, options)
        except WorkbenchError as err:
            self.post_message(self.Failed(job.key, str(err)))
            return
        quality, problem = (
            self.quality.try_estimate(job.text, item.text) if self.quality else (None, "")
        )
        if problem:  # said once; the pane translates on without scores
            self.post_message(self.Failed("", f"QE is off: {problem}"))
            self.quality = None
        line_id = append_history(self.history, name, item, translator, quality)
        engine = "ct2" if translator.backend.name == "ctranslate2" else ""
        score = quality.score if quality is not None else None
        self.post_message(
            self.Translated(job.key, item.text, item.seconds, item.notices, line_id, engine, score)
        )

    # ------------------------------------------------------------------ results

    def _cell(self, key: str, column: str, value: str | Text) -> None:
        table = self.query_one(DataTable)
        if key in table.rows:  # not cleared (Ctrl-L) while it was translated
            table.update_cell(key, column, value)

    @on(Translated)
    def _translated(self, message: Translated) -> None:
        entry = self.entries.get(message.key)
        if entry is None:
            return
        entry.translation, entry.notices = message.text, message.notices
        entry.line_id = message.line_id
        if message.engine:
            self._cell(message.key, "model", f"{entry.model}/{message.engine}")
        mark = Text("⚠ ", style="yellow") if message.notices else Text()
        shown = mark + cut(message.text, self.translation_width - len(mark))
        self._cell(message.key, "translation", shown)
        self._cell(message.key, "ms", f"{message.seconds * 1000:.0f}")
        if message.quality is not None and self.quality is not None:
            entry.quality = f"{self.quality.metric} {message.quality:.2f} (no reference)"
            self._cell(message.key, "qe", f"{message.quality:.1f}")
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
        entry = self.entries.get(message.key)
        if entry is not None:
            entry.failed, entry.notices = True, [message.error]
            self._cell(message.key, "translation", Text("not translated", style="red"))
            self._show_detail()
        self.app.notify(message.error, title="Translate", severity="error", timeout=8, markup=False)

    @property
    def pending(self) -> int:
        """Rows still waiting for their translation."""
        return sum(1 for e in self.entries.values() if e.line_id is None and not e.failed)

    # ------------------------------------------------------------------ the highlighted row

    def highlighted(self) -> Entry | None:
        """The entry of the highlighted row, or None when the history is empty."""
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return self.entries.get(str(key))

    @on(DataTable.RowHighlighted, "#translate-history")
    def _show_detail(self) -> None:
        """The highlighted row in full: source, translation, notices, judgement."""
        entry = self.highlighted()
        self.query_one("#translate-detail", Static).update(
            detail_text(entry) if entry is not None else Text()
        )

    @on(events.DescendantFocus)
    def _say_keys(self, event: events.DescendantFocus) -> None:
        typing = isinstance(event.widget, Input)
        self.query_one("#translate-hint", Static).update(Text(TYPING_HINT if typing else KEYS_HINT))

    def action_move(self, delta: int) -> None:
        """↑/↓ while typing: move the highlight without leaving the input."""
        table = self.query_one(DataTable)
        if table.row_count:
            table.move_cursor(row=max(0, min(table.row_count - 1, table.cursor_row + delta)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The judging and focus keys are off in the input, where they are typed."""
        # In the input these letters are typed; ``:judge`` does the same there.
        return not (action in ("judge", "focus_input") and isinstance(self.app.focused, Input))

    def action_judge(self, verdict: str) -> None:
        """g / o / e: judge the highlighted row (a note: type ``:judge VERDICT NOTE``)."""
        self.judge(Judgement(verdict))

    def judge(self, judgement: Judgement) -> bool:
        """Record a judgement of the highlighted row in the history; whether it was."""
        from workbench.core.translate.history import append_judgement

        entry = self.highlighted()
        if entry is None or entry.line_id is None:
            self.app.notify(
                "nothing to judge yet: highlight a translated row", title="Judge", markup=False
            )
            return False
        append_judgement(self.history, entry.line_id, judgement)
        entry.judgement = judgement
        self._cell(entry.key, "judged", judgement.verdict)
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
        self.query_one(DataTable).clear()
        self.entries.clear()
        self._show_detail()
