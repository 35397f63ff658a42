"""The headless event sink: plain, greppable lines for SSH, tmux, pipes and log files.

No colour, no cursor tricks, one event per line, flushed as it happens, so ``tail -f``
and ``| tee train.log`` show progress live. Structured metrics go to ``metrics.jsonl`` in
the run folder (written by the core, not here).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from workbench.core.events import Event
from workbench.core.live.detach import let_go_of_terminal
from workbench.core.views.event_text import EventText


class HeadlessPrinter:
    """Prints each event as the lines :class:`EventText` gives, flushed at once.

    A terminal that goes away (an SSH link dropped, ``tmux kill-session``) makes every
    later write fail with EIO or EPIPE, and so does a pipe whose reader died (``| tee``
    ended with the SSH session); the run must not die of that. The printer then stops
    printing and points the standard streams that were the terminal (and the one that
    failed) at ``/dev/null``, so no library's print or warning fails either; a file the
    output was redirected to is kept. The run's lines still reach ``train.log`` in its
    folder, which the core writes whoever prints.
    """

    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.stream: TextIO | None = None if quiet else (stream or sys.stdout)
        self.text = EventText()
        self.terminal_gone = False
        #: The standard streams that are the terminal (a file or a pipe is kept as it is).
        self.terminal_fds = [fd for fd in (0, 1, 2) if _isatty(fd)]

    def line(self, text: str = "") -> None:
        """Write one line and flush, so pipes and tail -f see it now."""
        stream = self.stream  # SIGHUP may take it away between two lines of this method
        if stream is None:
            return
        try:
            stream.write(text + "\n")
            stream.flush()
        except OSError:  # EIO from a closed terminal, EPIPE from a pipe whose reader died
            failed = _fileno(stream)
            self.stream = None  # the run goes on; its lines are in train.log
            self.lose_terminal(*([failed] if failed is not None else []))

    def lose_terminal(self, *also: int) -> None:
        """The terminal is gone: print nothing more, and let no write to it (or to the
        descriptors ``also``) fail."""
        self.stream = None
        self.terminal_gone = True
        let_go_of_terminal(sorted({*self.terminal_fds, *also}))

    def __call__(self, event: Event) -> None:
        """Print what ``event`` says: the printer is a run's event sink."""
        for line in self.text.lines(event):
            self.line(line)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _fileno(stream: TextIO) -> int | None:
    try:
        return stream.fileno()
    except (OSError, ValueError):  # a StringIO, a closed stream
        return None
