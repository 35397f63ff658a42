"""The Translate pane's options row: which model translates the next lines (fine-tuned,
base or both) and the beams and length typed for them (empty: the model's own, as
``workbench translate`` uses them). The pane reads them when Enter is pressed."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Input, Label, Select

from workbench.tui.widgets.translate_rows import CHOICES, checked_overrides


class TranslateOptions(Horizontal):
    """The model choice and the beams and length fields, on one line."""

    def compose(self) -> ComposeResult:
        """A compact select and two integer fields, each after its label."""
        yield Label("model:")
        yield Select(CHOICES, value="tuned", allow_blank=False, id="translate-model", compact=True)
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

    def models(self) -> list[str]:
        """The models the next line goes to, in the order their rows appear."""
        choice = self.query_one("#translate-model", Select).value
        return ["tuned", "base"] if choice == "both" else [str(choice)]

    def overrides(self) -> tuple[int | None, int | None]:
        """The beams and new tokens typed (None: the model's own); a bad value raises
        WorkbenchError."""
        beams, length = (
            self.query_one(f, Input).value for f in ("#translate-beams", "#translate-max")
        )
        return checked_overrides(beams, length)
