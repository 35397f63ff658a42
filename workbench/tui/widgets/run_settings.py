"""The Training pane's settings: the fields a user edits before Start, and the line that
says whose settings are shown -- a run's, from its config.json, or the next Start's.

The two may differ: a run trains with the settings it was started with (4 epochs) while
the next Start's come from the preset, the flags and the fields (28). The fields show a
watched run's own while it trains; otherwise they are the next Start's, and the line says
so whenever it shows a run's beside them.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Input, Label

from workbench.core.config.run_config import RunConfig
from workbench.core.views.training_text import settings_line

#: Settings a user may change before Start: (config field, label).
EDITABLE = (
    ("epochs", "epochs"),
    ("learning_rate", "lr"),
    ("batch_size", "batch"),
    ("samples", "samples"),
)
#: How the samples setting shows 0, which means every pair, not none.
ALL_SAMPLES = "all"
#: Whose settings the line shows when no run is shown: what Start would run.
NEXT_START = "next Start"


def setting_text(field: str, value: float) -> str:
    """A setting as its field shows it: ``0.003``, ``16``, and ``all`` for 0 samples."""
    return ALL_SAMPLES if field == "samples" and value == 0 else f"{value:g}"


def header_text(whose: str, config: RunConfig, fields_differ: bool = False) -> Text:
    """The settings line above the charts, saying whose they are (``run NAME``, ``next
    Start``); a run's with its editable ones first (the next Start's are in the fields
    already). ``fields_differ``: and that the fields are the next Start's, not these."""
    fields = " · ".join(
        f"{label} {setting_text(field, getattr(config, field))}" for field, label in EDITABLE
    )
    shown = (
        settings_line(config)
        if whose.endswith(NEXT_START)
        else f"{fields} · {settings_line(config)}"
    )
    tail = f" · the fields: {NEXT_START}'s" if fields_differ else ""
    return Text(f"{whose}: {shown}{tail}")


class SettingsFields(Horizontal):
    """The editable settings (at 80 columns they fill the row: the line below the
    buttons says whose they are)."""

    def __init__(self, config: RunConfig, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.config = config

    def compose(self) -> ComposeResult:
        """A label and a field per editable setting."""
        for field, label in EDITABLE:
            yield Label(f"{label}:")
            yield Input(
                setting_text(field, getattr(self.config, field)),
                id=f"set-{field}",
                classes="setting",
                compact=True,
            )

    def show(self, shown: RunConfig) -> None:
        """Fill the fields with ``shown``'s settings."""
        for field, _ in EDITABLE:
            self.query_one(f"#set-{field}", Input).value = setting_text(
                field, getattr(shown, field)
            )

    def edited(self) -> dict[str, Any]:
        """The fields as typed (``all`` samples as 0), for the config to check."""
        values: dict[str, Any] = {}
        for field, _ in EDITABLE:
            text = self.query_one(f"#set-{field}", Input).value.strip()
            values[field] = 0 if field == "samples" and text.lower() == ALL_SAMPLES else text
        return values
