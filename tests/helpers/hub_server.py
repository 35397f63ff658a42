"""A Hugging Face Hub look-alike on 127.0.0.1, standard library only, for the tests.

:class:`HubServer` serves folders as model and dataset repos
(:mod:`tests.helpers.hub_handler` answers each request as the Hub does) and logs every
request (method, path, status, body bytes, range) for the tests to read; one closed
unanswered is logged with status 0, one cut mid-body with minus its status. Its
:class:`~tests.helpers.hub_records.Faults` make it misbehave on demand the ways real
mirrors do: a wrong ``Range`` answer, damaged files, 401/5xx, and a mirror under load
(every n-th file request 429 or 503, connections reset mid-body) or one that dies
half-way. The repos the tests serve are built by :mod:`tests.helpers.hub_repos`; a plain
proxy is :mod:`tests.helpers.hub_proxy`.
"""

from __future__ import annotations

import hashlib
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.helpers.hub_handler import HubHandler
from tests.helpers.hub_records import Faults, Repo, Request


class QuietServer(ThreadingHTTPServer):
    """A client that gave up on a request (a retry after a read timeout, a killed
    process) is expected here: its broken connection is not printed as a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class HubServer:
    """The server; start with :meth:`start`, point ``HF_ENDPOINT`` at :attr:`url`."""

    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.faults = Faults()
        self.log: list[Request] = []
        self.file_requests = 0  # answered ``/resolve/`` requests since the last reset
        self.generation = 0  # resets so far
        self.released = threading.Event()  # lets go of the requests ``hang_after`` holds
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    # --- set-up -----------------------------------------------------------------------

    def add_repo(self, kind: str, repo_id: str, folder: Path) -> Repo:
        """Serve ``folder`` as ``repo_id``; its commit sha is a hash of the files."""
        digest = hashlib.sha1(repo_id.encode())
        for name, path in Repo(kind, repo_id, folder, "").files().items():
            digest.update(name.encode() + b"\0" + hashlib.sha1(path.read_bytes()).digest())
        repo = Repo(kind, repo_id, folder, digest.hexdigest())
        self.repos[(kind, repo_id)] = repo
        return repo

    def start(self) -> HubServer:
        """Listen on 127.0.0.1 on a free port, serving on a daemon thread."""
        server = self

        class Handler(HubHandler):
            hub = server

        self._httpd = QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop listening."""
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def port(self) -> int:
        """The port it listens on."""
        assert self._httpd is not None
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The endpoint, for ``HF_ENDPOINT``."""
        return f"http://127.0.0.1:{self.port}"

    def reset(self) -> None:
        """No faults, an empty log."""
        with self._lock:
            self.faults = Faults()
            self.log.clear()
            self.file_requests = 0
            self.generation += 1
        self.released.set()  # requests held by ``hang_after`` end unanswered
        self.released = threading.Event()

    def record(self, request: Request, generation: int) -> None:
        """Append to the log (called by the handler threads), unless the request came
        before the last reset: a stalled answer must not land in the next test's log."""
        with self._lock:
            if generation == self.generation:
                self.log.append(request)

    def requests(self) -> list[Request]:
        """A copy of the log so far."""
        with self._lock:
            return list(self.log)

    def count_file_request(self) -> int:
        """Count one answered file request; its number, from 1."""
        with self._lock:
            self.file_requests += 1
            return self.file_requests

    def is_footer_read(self, request: Request) -> bool:
        """True for pyarrow's first read of a dataset's parquet file: its last 64 KiB,
        where the footer is (the whole of the look-alike's small files)."""
        repo_path, rest = request.path.split("/resolve/", 1)
        folder = self.repos[("dataset", repo_path.removeprefix("/datasets/"))].folder
        size = (folder / rest.split("/", 1)[1].split("?")[0]).stat().st_size
        return request.range == f"bytes={max(0, size - 2**16)}-{size - 1}"

    def dead(self) -> bool:
        """True once ``drop_after`` or ``hang_after`` file requests were answered."""
        limits = [n for n in (self.faults.drop_after, self.faults.hang_after) if n is not None]
        with self._lock:
            return bool(limits) and self.file_requests >= min(limits)
