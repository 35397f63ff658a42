"""How the Hub look-alike answers one request: exactly the endpoints that huggingface_hub
1.x/2.x, transformers 5 and ``HfFileSystem`` call (read from their source):

- ``GET /api/{models|datasets}/{id}`` and ``.../revision/{rev}``: repo info (``HfApi``
  ``model_info``/``dataset_info``/``repo_info``, which ``HfFileSystem`` uses to resolve a path);
- ``GET /api/{models|datasets}/{id}/tree/{rev}[/{path}]?recursive=&expand=``: the listing
  (``list_repo_tree``), paginated with a ``Link: <...>; rel="next"`` header like the Hub;
- ``HEAD``/``GET /{id}/resolve/{rev}/{path}`` and ``/datasets/{id}/resolve/...``: files with
  ``X-Repo-Commit``, ``ETag`` and ``Content-Length`` (``get_hf_file_metadata``,
  ``hf_hub_download``), and ``Range`` answered with 206 and ``Content-Range``
  (``HfFileSystemFile._fetch_range``);
- 404s typed by ``X-Error-Code`` (``RepoNotFound``, ``RevisionNotFound``, ``EntryNotFound``):
  the clients probe optional files (``tokenizer.json``, ``added_tokens.json``...) and must
  be told "no such file", not "no such repo".

Every answer goes through the server's :class:`~tests.helpers.hub_records.Faults`.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.helpers.hub_records import Repo, Request, git_blob_sha

if TYPE_CHECKING:
    from tests.helpers.hub_server import HubServer

#: Entries per listing page. The Hub's is 1,000; at 3 every listing of the test repos
#: takes several pages, so the clients must follow the ``Link`` header.
PAGE_SIZE = 3
#: Files listed with an ``lfs`` block, as the Hub lists large binary files.
LFS_SUFFIXES = (".parquet", ".safetensors", ".bin", ".spm")


class HubHandler(BaseHTTPRequestHandler):
    """Answers one request the way the Hub does (see the module docstring)."""

    hub: HubServer
    protocol_version = "HTTP/1.1"  # keep-alive, as httpx expects
    generation = 0  # the server's, when this request arrived

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the request log is self.hub.log

    # --- answering ---------------------------------------------------------------------

    def _send(
        self,
        status: int,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        # Logged before the answer goes out: a test that reads the log as soon as its
        # request returns must find the request there (logging after raced, under load).
        sent = 0 if self.command == "HEAD" else len(body)
        self.hub.record(
            Request(self.command, self.path, status, sent, self.headers.get("Range")),
            self.generation,
        )
        self.send_response(status)
        head = {"Content-Type": content_type, "Content-Length": str(len(body)), **(headers or {})}
        for key, value in head.items():
            self.send_header(key, value)
        self.end_headers()
        if sent:
            self.wfile.write(body)

    def _json(self, value: Any, headers: dict[str, str] | None = None) -> None:
        self._send(200, json.dumps(value).encode(), headers)

    def _error(
        self, status: int, code: str | None, message: str, headers: dict[str, str] | None = None
    ) -> None:
        extra = dict(headers or {})
        if code:
            extra["X-Error-Code"] = code
        extra["X-Error-Message"] = message
        self._send(status, json.dumps({"error": message}).encode(), extra)

    def do_HEAD(self) -> None:
        self._route()

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self._route()

    # --- routing -----------------------------------------------------------------------

    def _unanswered(self) -> None:
        """Close the connection without an answer (after holding it, for ``hang_after``)."""
        self.hub.record(
            Request(self.command, self.path, 0, 0, self.headers.get("Range")), self.generation
        )
        if self.hub.faults.hang_after is not None:
            self.hub.released.wait(120)
        self.close_connection = True

    def _cut(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        """Send the headers and half the body, then reset the connection (RST)."""
        import socket
        import struct

        self.hub.record(
            Request(self.command, self.path, -status, len(body) // 2, None), self.generation
        )
        self.send_response(status)
        for key, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True

    def _route(self) -> None:
        self.generation = self.hub.generation
        faults = self.hub.faults
        if self.hub.dead():
            self._unanswered()
            return
        if faults.status:
            self._error(faults.status, None, f"HTTP {faults.status} injected by the test")
            return
        url = urlsplit(self.path)
        path = unquote(url.path)
        query = parse_qs(url.query)
        api = re.fullmatch(
            r"/api/(models|datasets)/([^/]+/[^/]+)(?:/(revision|tree)/([^/]+)(/.*)?)?", url.path
        )
        if api:
            kind = api.group(1)[:-1]
            repo = self._repo(kind, unquote(api.group(2)))
            if repo is None:
                return
            action, revision = api.group(3), unquote(api.group(4) or "main")
            if not self._revision_ok(repo, revision):
                return
            if action == "tree":
                self._tree(repo, revision, unquote(api.group(5) or "").strip("/"), query)
            else:
                self._info(repo)
            return
        resolve = re.fullmatch(r"/(datasets/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if resolve:
            kind = "dataset" if resolve.group(1) else "model"
            repo = self._repo(kind, resolve.group(2))
            if repo is None or not self._revision_ok(repo, resolve.group(3)):
                return
            self._file(repo, resolve.group(4))
            return
        self._error(404, None, f"no route for {path}")

    def _repo(self, kind: str, repo_id: str) -> Repo | None:
        repo = self.hub.repos.get((kind, repo_id))
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found")
            return None
        if repo_id in self.hub.faults.gated:
            self._error(
                401,
                "GatedRepo",
                f"Access to {kind} {repo_id} is restricted. You must "
                "have access to it and be authenticated to access it. Please log in.",
            )
            return None
        return repo

    def _revision_ok(self, repo: Repo, revision: str) -> bool:
        if revision in ("main", repo.sha):
            return True
        self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        return False

    def _info(self, repo: Repo) -> None:
        siblings = [{"rfilename": name} for name in repo.files()]
        info: dict[str, Any] = {
            "_id": repo.sha[:24],
            "id": repo.repo_id,
            "sha": repo.sha,
            "lastModified": "2024-01-01T00:00:00.000Z",
            "private": False,
            "gated": False,
            "disabled": False,
            "siblings": siblings,
            "cardData": {},
            "tags": [],
            "downloads": 0,
            "likes": 0,
            "author": repo.repo_id.split("/")[0],
        }
        if repo.kind == "model":
            info.update(
                {
                    "modelId": repo.repo_id,
                    "pipeline_tag": "translation",
                    "library_name": "transformers",
                    "config": {},
                }
            )
        self._json(info)

    def _entry(self, repo: Repo, name: str, path: Path) -> dict[str, Any]:
        data = self._content(name, path.read_bytes())
        entry: dict[str, Any] = {
            "type": "file",
            "oid": git_blob_sha(data),
            "size": len(data),
            "path": name,
        }
        if name.endswith(LFS_SUFFIXES):
            entry["lfs"] = {
                "oid": hashlib.sha256(data).hexdigest(),
                "size": len(data),
                "pointerSize": 134,
            }
        return entry

    def _tree(self, repo: Repo, revision: str, folder: str, query: dict[str, list[str]]) -> None:
        files = repo.files()
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        prefix = f"{folder}/" if folder else ""
        if folder and not any(name.startswith(prefix) for name in files):
            self._error(
                404,
                "EntryNotFound",
                f'{folder} does not exist on "{revision}"',
                {"X-Repo-Commit": repo.sha},
            )
            return
        entries: list[dict[str, Any]] = []
        folders: set[str] = set()
        for name, path in files.items():
            if not name.startswith(prefix):
                continue
            parts = name[len(prefix) :].split("/")
            for depth in range(1, len(parts)):  # the folders on the way
                sub = prefix + "/".join(parts[:depth])
                if sub not in folders and (recursive or depth == 1):
                    folders.add(sub)
                    entries.append(
                        {"type": "directory", "oid": git_blob_sha(sub.encode()), "path": sub}
                    )
            if recursive or len(parts) == 1:
                entries.append(self._entry(repo, name, path))
        start = int(query.get("cursor", ["0"])[0])
        page = entries[start : start + PAGE_SIZE]
        headers = {}
        if start + PAGE_SIZE < len(entries):
            base = self.path.split("?")[0]
            flag = str(recursive).lower()
            next_query = f"recursive={flag}&expand=false&cursor={start + PAGE_SIZE}"
            headers["Link"] = f'<{self.hub.url}{base}?{next_query}>; rel="next"'
        self._json(page, headers)

    def _content(self, name: str, data: bytes) -> bytes:
        faults = self.hub.faults
        for suffix in faults.corrupt:
            if name.endswith(suffix):
                # Garble the parquet footer's metadata, keep its length and magic bytes.
                cut = max(8, len(data) - 400)
                data = data[:cut] + bytes(b ^ 0x5A for b in data[cut:-8]) + data[-8:]
        return data

    def _file(self, repo: Repo, name: str) -> None:
        faults = self.hub.faults
        number = self.hub.count_file_request()
        if faults.stall_every and number % faults.stall_every == 0:
            time.sleep(faults.stall_seconds)
        key = f"{self.path} {self.headers.get('Range')}"
        for every, status in faults.every.items():
            if number % every == 0 and faults.every_seen.get(key, 0) < faults.every_most:
                faults.every_seen[key] = faults.every_seen.get(key, 0) + 1
                extra = {"Retry-After": faults.retry_after} if status == 429 else {}
                self._error(status, None, f"HTTP {status} injected (file request {number})", extra)
                return
        path = repo.files().get(name)
        commit = {"X-Repo-Commit": repo.sha}
        if path is None:
            self._error(404, "EntryNotFound", f"{name} does not exist", commit)
            return
        listed = self._content(name, path.read_bytes())
        data = listed
        for suffix, keep in self.hub.faults.truncate.items():
            if name.endswith(suffix):
                data = listed[:keep]  # the listing still gives the full size
        lfs = name.endswith(LFS_SUFFIXES)
        etag = hashlib.sha256(listed).hexdigest() if lfs else git_blob_sha(listed)
        headers = {**commit, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
        wanted = self.headers.get("Range")
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", wanted or "")
        if match and not self.hub.faults.ignore_range:
            start = int(match.group(1))
            end = min(int(match.group(2)) if match.group(2) else len(data) - 1, len(data) - 1)
            if start >= len(data):
                self._send(416, b"", {**headers, "Content-Range": f"bytes */{len(data)}"})
                return
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            self._answer(206, data[start : end + 1], headers, number)
            return
        self._answer(200, data, headers, number)

    def _answer(self, status: int, body: bytes, headers: dict[str, str], number: int) -> None:
        cut = self.hub.faults.cut_every
        if cut and self.command == "GET" and number % cut == 0 and len(body) > 1:
            self._cut(status, body, {**headers, "Content-Type": "application/octet-stream"})
            return
        self._send(status, body, headers, "application/octet-stream")
