"""The one exception type a user sees as a single line instead of a traceback.

Core code raises :class:`WorkbenchError` for anything the user can fix (a bad value, a
missing file, an unreachable Hub); the CLI prints its message and exits non-zero.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """A failure the user can act on; ``str(err)`` is the whole message."""

    exit_code = 2


class HubUnreachableError(WorkbenchError):
    """The Hugging Face Hub (or the mirror in HF_ENDPOINT) cannot be reached."""

    exit_code = 3
