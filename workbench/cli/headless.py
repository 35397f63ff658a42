"""The headless event sink: plain, greppable lines for SSH, tmux, pipes and log files.

No colour, no cursor tricks, one event per line, flushed as it happens, so ``tail -f``
and ``| tee train.log`` show progress live. Structured metrics go to ``metrics.jsonl`` in
the run folder (written by the core, not here).
"""

from __future__ import annotations

import sys
from typing import TextIO

from workbench.core.events import Event
from workbench.core.views.event_text import EventText


class HeadlessPrinter:
    """Prints each event as the lines :class:`EventText` gives, flushed at once."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.text = EventText()

    def line(self, text: str = "") -> None:
        """Write one line and flush, so pipes and tail -f see it now."""
        self.stream.write(text + "\n")
        self.stream.flush()

    def __call__(self, event: Event) -> None:
        for line in self.text.lines(event):
            self.line(line)
