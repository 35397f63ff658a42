"""The one exception type a user sees as a single line instead of a traceback.

Core code raises :class:`WorkbenchError` for anything the user can fix (a bad value, a
missing file, an unreachable Hub); the CLI prints its message and exits non-zero.

A message often names a URL (a mirror, a proxy, a sweep's database), and a URL can carry
a password. Every message therefore goes through :func:`without_passwords` when the error
is made, so no password reaches a terminal, a log or the TUI by way of an error.
"""

from __future__ import annotations

import re

#: ``scheme://user:password@`` anywhere in a text; the password is what is hidden. One
#: slash is enough: a URL given where a path was expected comes back from ``Path`` as
#: ``https:/user:password@host``.
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][\w+.-]*:/+[^\s:/@]*:)[^\s@/]+@")
HIDDEN = "***"


def without_passwords(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ``***``."""
    return _USERINFO.sub(lambda m: f"{m.group('head')}{HIDDEN}@", text)


class WorkbenchError(Exception):
    """A failure the user can act on; ``str(err)`` is the whole message, passwords hidden."""

    exit_code = 2

    def __init__(self, message: str = "") -> None:
        super().__init__(without_passwords(str(message)))


def failure_text(err: BaseException) -> str:
    """An error in words for a line a run or a session goes on after: a WorkbenchError's
    own sentence, anything else with its type; passwords hidden either way (a library's
    message can quote a URL with its credentials)."""
    if isinstance(err, WorkbenchError):
        return str(err)
    return without_passwords(f"{type(err).__name__}: {err}")


class HubUnreachableError(WorkbenchError):
    """The Hugging Face Hub (or the mirror in HF_ENDPOINT) cannot be reached."""

    exit_code = 3
