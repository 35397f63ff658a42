"""App-wide messages. Pane-local ones live in the pane that sends them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message

from workbench.core.events import Event


@dataclass
class RunEvent(Message):
    """A core training event, posted from the training worker thread."""

    event: Event


@dataclass
class RunFinished(Message):
    """A run ended (or a saved run was opened): the summary for the other panes."""

    status: str
    run_dir: str
    summary: dict[str, Any]


@dataclass
class ShowAttention(Message):
    """Open a sentence in the Attention pane."""

    sentence: str
