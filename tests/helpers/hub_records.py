"""What the Hub look-alike (tests/helpers/hub_server.py) serves and logs: a folder served
as a repo at one commit, one logged request, and the faults a test switches on."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Faults:
    """Ways to misbehave, switched on by a test and off again by :meth:`HubServer.reset`."""

    ignore_range: bool = False  # answer a Range request with 200 and the whole file
    status: int | None = None  # answer every request with this status (e.g. 503)
    gated: set[str] = field(default_factory=set)  # repo ids answered 401 GatedRepo
    truncate: dict[str, int] = field(default_factory=dict)  # path suffix -> bytes served
    corrupt: set[str] = field(default_factory=set)  # path suffixes whose footer is garbled
    # A mirror under load: {4: 429, 7: 503} answers every 4th file request (``/resolve/``)
    # with 429 and every 7th with 503 (the first that divides wins); a 429 says Retry-After.
    every: dict[int, int] = field(default_factory=dict)
    retry_after: str = "1"
    # ...but a mirror under load, not a dead one: the same request (path and range) is
    # answered so at most this many times, under the client's 6 tries. With the count
    # shared by concurrent readers, one request's retries could otherwise land on
    # multiples of 4 or 7 six times running (seen once in CI: HubRetriesExhausted).
    every_most: int = 3
    every_seen: dict[str, int] = field(default_factory=dict)
    # Every n-th file GET sends its headers and half its body, then resets the connection.
    cut_every: int | None = None
    # Every n-th file request waits this long before it is answered (a read timeout).
    stall_every: int | None = None
    stall_seconds: float = 2.0
    # A mirror that dies: once this many file requests were answered, every request's
    # connection is closed without an answer...
    drop_after: int | None = None
    # ...or held unanswered until the test resets the server (a kill -9 lands mid-download).
    hang_after: int | None = None


@dataclass(frozen=True)
class Request:
    """One logged request."""

    method: str
    path: str
    status: int
    bytes: int
    range: str | None = None


@dataclass
class Repo:
    """A folder served as a repo at one commit."""

    kind: str  # "model" or "dataset"
    repo_id: str
    folder: Path
    sha: str

    def files(self) -> dict[str, Path]:
        """Repo path -> file, for every file under the folder."""
        return {
            p.relative_to(self.folder).as_posix(): p
            for p in sorted(self.folder.rglob("*"))
            if p.is_file()
        }


def git_blob_sha(data: bytes) -> str:
    """The git object id of a file, as the Hub reports it (``oid``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
