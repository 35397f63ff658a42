"""App-wide messages and how a pane reports a refused input. Pane-local messages live
in the pane that sends them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from textual.message import Message
from textual.worker import Worker, WorkerState

from workbench.core.events import Event
from workbench.core.records.summary import RunSummary
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from textual.app import App

T = TypeVar("T")


def checked(app: App[object], title: str, read: Callable[[], T]) -> T | None:
    """``read()``, or None after showing its one-line error: a bad value typed into a pane
    is refused with the same sentence the CLI prints, and nothing starts."""
    try:
        return read()
    except WorkbenchError as err:
        app.notify(str(err), title=title, severity="error", timeout=8, markup=False)
        return None


@dataclass
class RunEvent(Message):
    """A core training event, posted from the training worker thread."""

    event: Event


@dataclass
class RunFinished(Message):
    """A run ended (or a saved run was opened): the summary for the other panes."""

    status: str
    run_dir: str
    summary: RunSummary


@dataclass
class OpenRun(Message):
    """Show a saved run in the Samples pane (from the Runs pane)."""

    run_dir: str


@dataclass
class ShowAttention(Message):
    """Open a sentence in the Attention pane."""

    sentence: str


@dataclass
class WorkerFailed(Message):
    """A pane's worker raised: the app shows it (``Worker.StateChanged`` does not bubble)."""

    group: str
    error: BaseException | None


class PostsMessages(Protocol):
    """What :class:`ForwardsWorkerFailures` needs of the widget or app it is mixed into."""

    def post_message(self, message: Message) -> bool:
        """Queue ``message`` on the widget or app, as Textual's ``MessagePump`` does."""


class ForwardsWorkerFailures:
    """Mixin for panes that run workers: pass their failures up to the app.

    Textual posts ``Worker.StateChanged`` only to the widget that started the worker and
    does not bubble it, so without this an exception in a pane's thread would vanish
    (``exit_on_error=False`` keeps the app up, but nobody would see why nothing happened).
    """

    def on_worker_state_changed(self: PostsMessages, event: Worker.StateChanged) -> None:
        """Pass a failed worker's error up to the app to show (the event itself does not bubble)."""
        if event.state == WorkerState.ERROR:
            self.post_message(WorkerFailed(event.worker.group, event.worker.error))
