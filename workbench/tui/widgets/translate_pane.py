"""Translate pane: type a sentence, see the fine-tuned and/or base model's translation.

Translation runs on a worker (models load lazily, once each) with the same
:class:`Translator` as ``workbench interact``; every result is appended to the console
history file as it happens. Like the console, it uses a CTranslate2 export of a model when
an up-to-date one exists, says so when the model loads, and marks those rows "(ct2)".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Label, Select

from workbench.errors import WorkbenchError
from workbench.tui.messages import ForwardsWorkerFailures, ShowAttention, checked

CHOICES = [("fine-tuned", "tuned"), ("base", "base"), ("both", "both")]


class TranslatePane(ForwardsWorkerFailures, Vertical):
    """An input line and a history of translations with timings."""

    FOCUS_ORDER = ("Input#translate-input",)  # typing is what this pane is for
    BINDINGS = [
        Binding("ctrl+t", "open_attention", "Attention"),
        Binding("ctrl+l", "clear", "Clear"),
    ]

    @dataclass
    class Translated(Message):
        """One line translated by one model (posted from the worker)."""

        model: str
        source: str
        text: str
        seconds: float
        notices: list[str]
        engine: str = ""

    @dataclass
    class Loaded(Message):
        """A model was loaded: which engine translates with it, and any notices."""

        model: str
        backend: str
        notices: list[str]

    @dataclass
    class Failed(Message):
        """A model could not be loaded or the line could not be translated."""

        error: str

    def __init__(
        self,
        tuned_model: str,
        base_model: str | None,
        history: Path,
        base_languages: dict[str, str | None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.models = {"tuned": tuned_model, "base": base_model}
        # The base model decodes in the run's direction, as the "before" side did; a saved
        # model in its own (its workbench.json).
        self.languages: dict[str, dict[str, str | None]] = {
            "tuned": {},
            "base": dict(base_languages or {}),
        }
        self.history = history
        self._translators: dict[str, Any] = {}
        self.last_source: str | None = None

    def compose(self) -> ComposeResult:
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
        yield DataTable(id="translate-history", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("model", "source", "translation", "ms")

    def set_models(self, tuned: str | None = None, base: str | None = None) -> None:
        """Point at new models (after a run); loaded again on next use."""
        if tuned:
            self.models["tuned"] = tuned
            self._translators.pop("tuned", None)
        if base and base != self.models["base"]:
            self.models["base"] = base
            self.languages["base"] = {}  # e.g. a scratch run's initial model: its own
            self._translators.pop("base", None)

    def _overrides(self) -> tuple[int | None, int | None]:
        """Beams and length the user typed (None: the model's own), checked as the CLI's
        ``--num-beams``/``--max-new-tokens`` are; a bad value raises WorkbenchError."""
        from workbench.core.decoding import check_beams, check_new_tokens

        def number(widget_id: str) -> int | None:
            text = self.query_one(widget_id, Input).value.strip()
            return int(text) if text.lstrip("-").isdigit() else None

        beams, length = number("#translate-beams"), number("#translate-max")
        if beams is not None:
            check_beams(beams, "beams")
        if length is not None:
            check_new_tokens(length, "max new")
        return beams, length

    @on(Input.Submitted, "#translate-input")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value
        if not text.strip():
            return
        overrides = checked(self.app, "Translate", self._overrides)
        if overrides is None:
            return
        event.input.value = ""
        self.last_source = text
        choice = self.query_one("#translate-model", Select).value
        keys = ["tuned", "base"] if choice == "both" else [str(choice)]
        self.translate(text, keys, overrides)

    @work(thread=True, exit_on_error=False, group="translate")
    def translate(
        self, text: str, keys: list[str], overrides: tuple[int | None, int | None]
    ) -> None:
        """Load the chosen models once and translate off the main thread."""
        from workbench.core.translate.history import append_history
        from workbench.core.translate.translator import Translator

        for key in keys:
            name = self.models.get(key)
            if not name:
                self.post_message(self.Failed(f"no {key} model yet: train one first"))
                continue
            try:
                translator = self._translators.get(key)
                if translator is None:
                    translator = Translator.from_pretrained(name, **self.languages[key])
                    self._translators[key] = translator
                    self.post_message(
                        self.Loaded(key, translator.backend_label, translator.notices)
                    )
                options = translator.default_options().overridden(*overrides)
                item = translator.translate(text, options)
            except WorkbenchError as err:
                self.post_message(self.Failed(str(err)))
                continue
            append_history(self.history, name, item, translator)
            engine = "ct2" if translator.backend.name == "ctranslate2" else ""
            self.post_message(
                self.Translated(key, text, item.text, item.seconds, item.notices, engine)
            )

    @on(Translated)
    def _translated(self, message: Translated) -> None:
        table = self.query_one(DataTable)
        model = f"{message.model} ({message.engine})" if message.engine else message.model
        table.add_row(
            model, Text(message.source), Text(message.text), f"{message.seconds * 1000:.0f}"
        )
        table.move_cursor(row=table.row_count - 1)
        for notice in message.notices:
            self.app.notify(notice, severity="warning")

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        # Paths can hold brackets: no markup.
        model = {key: label for label, key in CHOICES}.get(message.model, message.model)
        self.app.notify(f"{model} model: {message.backend}", title="Translate", markup=False)
        for notice in message.notices:
            self.app.notify(notice, title="Translate", severity="warning", timeout=10, markup=False)

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        self.app.notify(message.error, title="Translate", severity="error", timeout=8)

    def action_open_attention(self) -> None:
        if self.last_source:
            self.post_message(ShowAttention(self.last_source))

    def action_clear(self) -> None:
        self.query_one(DataTable).clear()
