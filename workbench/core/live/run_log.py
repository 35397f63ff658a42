"""The run's lines as a file: ``train.log`` in the run folder, whoever started the run.

The same lines ``train --headless`` prints (:class:`~workbench.core.views.event_text.EventText`),
appended as they happen, so ``workbench logs --follow`` shows any run from any terminal
-- one started in a TUI, detached, or in a terminal that has since gone away. Lines that
come before the run has a folder (the data phase) are kept and written once it has one.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from workbench.core.events import Event
from workbench.core.run_folder.layout import RunFolder
from workbench.core.views.event_text import EventText


class RunLog:
    """An event sink that appends each event's lines to the run folder's ``train.log``."""

    def __init__(self) -> None:
        self.text = EventText()
        self.path: Path | None = None
        self._pending: list[str] = []
        self._lock = threading.Lock()

    def open(self, run_dir: Path) -> None:
        """Start writing into ``run_dir`` (with the lines kept until now)."""
        with self._lock:
            self.path = RunFolder(run_dir).log
            pending, self._pending = self._pending, []
            with contextlib.suppress(OSError):
                self.path.touch()  # from now on a viewer reads the run's lines here
        for line in pending:
            self.line(line)

    def line(self, text: str) -> None:
        """Append one line (one ``write()``, so a follower never sees half of it)."""
        with self._lock:
            if self.path is None:
                self._pending.append(text)
                return
            try:
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(text + "\n")
            except OSError:
                pass  # a full disk must not end the run; metrics.jsonl says the same

    def __call__(self, event: Event) -> None:
        """Append the lines ``event`` says, as the terminal shows them."""
        for line in self.text.lines(event):
            self.line(line)
