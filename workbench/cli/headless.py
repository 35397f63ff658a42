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
    """Prints each event as the lines :class:`EventText` gives, flushed at once.

    A terminal that goes away (an SSH link dropped, ``tmux kill-session``) makes every
    later write fail with EIO or EPIPE; the run must not die of that. The printer then
    stops printing and points standard input, output and error at ``/dev/null``, so no
    library's print or warning fails either. The run's lines still reach ``train.log``
    in its folder, which the core writes whoever prints.
    """

    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.stream: TextIO | None = None if quiet else (stream or sys.stdout)
        self.text = EventText()
        self.terminal_gone = False

    def line(self, text: str = "") -> None:
        """Write one line and flush, so pipes and tail -f see it now."""
        if self.stream is None:
            return
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except OSError:  # EIO from a closed terminal, EPIPE through ssh
            self.lose_terminal()

    def lose_terminal(self) -> None:
        """The terminal is gone: print nothing more, and let no write to it fail."""
        from workbench.core.live.detach import let_go_of_terminal

        self.stream = None
        self.terminal_gone = True
        let_go_of_terminal()

    def __call__(self, event: Event) -> None:
        for line in self.text.lines(event):
            self.line(line)
