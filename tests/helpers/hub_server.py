"""A Hugging Face Hub look-alike on 127.0.0.1, standard library only, for the tests.

It serves folders as model and dataset repos through exactly the endpoints that
huggingface_hub 1.x/2.x, transformers 5 and ``HfFileSystem`` call (read from their source):

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

Every request is logged (method, path, status, body bytes, range) for the tests to read;
one closed unanswered is logged with status 0, one cut mid-body with minus its status.
:class:`Faults` makes the server misbehave on demand the ways real mirrors do: a wrong
``Range`` answer, damaged files, 401/5xx, and a mirror under load (every n-th file request
429 or 503, connections reset mid-body) or one that dies half-way.
:class:`ForwardingProxy` is a plain HTTP proxy that logs what passes through it.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

#: Entries per listing page. The Hub's is 1,000; at 3 every listing of the test repos
#: takes several pages, so the clients must follow the ``Link`` header.
PAGE_SIZE = 3
#: Files listed with an ``lfs`` block, as the Hub lists large binary files.
LFS_SUFFIXES = (".parquet", ".safetensors", ".bin", ".spm")


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
        for every, status in faults.every.items():
            if number % every == 0:
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


class ForwardingProxy:
    """A plain HTTP proxy on 127.0.0.1 that forwards requests and logs their URLs."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                target = urlsplit(self.path)  # absolute-form: http://host:port/path
                with proxy._lock:
                    proxy.log.append(f"{self.command} {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("proxy-connection", "connection", "host")
                }
                conn = http.client.HTTPConnection(
                    target.hostname or "", target.port or 80, timeout=30
                )
                path = target.path + (f"?{target.query}" if target.query else "")
                conn.request(self.command, quote(path, safe="/?=&%:@"), body=body, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("connection", "transfer-encoding", "keep-alive"):
                        self.send_header(key, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_HEAD = do_POST = _forward

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        """The proxy's address, for ``HTTP_PROXY``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def requests(self) -> list[str]:
        """``METHOD url`` of every request forwarded so far."""
        with self._lock:
            return list(self.log)

    def stop(self) -> None:
        """Stop listening."""
        self._httpd.shutdown()
        self._httpd.server_close()


# --- the repos the tests serve -----------------------------------------------------------

#: The real model's id and the labels of its vocabulary that the tests use.
OPUS_MODEL = "Helsinki-NLP/opus-mt-en-zh"
LABELS = (">>cmn_Hans<<", ">>cmn_Hant<<")
WMT_DATASET = "wmt/wmt19"
#: The opus-en-de preset's model and data, served as look-alikes too.
OPUS_DE_MODEL = "Helsinki-NLP/opus-mt-en-de"
WMT14_DATASET = "wmt/wmt14"


def build_opus_like_model(
    folder: Path, sources: list[str], targets: list[str], labels: tuple[str, ...] = LABELS
) -> Path:
    """A tiny random MarianMT saved as opus-mt-en-zh's repo is laid out (no workbench.json);
    with ``labels=()`` a single-pair one, as opus-mt-en-de is.

    Its tokenizer is a real ``MarianTokenizer`` (``source.spm``, ``target.spm``,
    ``vocab.json`` holding the language labels as single tokens), and its generation config
    is the real model's: 4 beams, ``max_length`` 512, the pad token banned.
    """
    from transformers import GenerationConfig, MarianConfig, MarianMTModel, MarianTokenizer

    from tests.helpers.runs import tiny_config
    from workbench.core.model.scratch import build_tokenizer

    spm = folder / "spm"
    build_tokenizer(sources, targets, spm, tiny_config())
    vocab = json.loads((spm / "vocab.json").read_text(encoding="utf-8"))
    for label in labels:
        vocab[label] = len(vocab)
    (spm / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = MarianTokenizer(
        vocab=str(spm / "vocab.json"),
        source_spm=str(spm / "source.spm"),
        target_spm=str(spm / "target.spm"),
        source_lang="en",
        target_lang="zh",
    )
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    config = MarianConfig(
        vocab_size=len(vocab),
        decoder_vocab_size=len(vocab),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=512,
        scale_embedding=True,
        share_encoder_decoder_embeddings=True,
        pad_token_id=pad,
        eos_token_id=eos,
        decoder_start_token_id=pad,
        forced_eos_token_id=eos,
    )
    import torch

    torch.manual_seed(0)
    model = MarianMTModel(config)
    model.generation_config = GenerationConfig(
        pad_token_id=pad,
        eos_token_id=eos,
        decoder_start_token_id=pad,
        forced_eos_token_id=eos,
        bad_words_ids=[[pad]],
        max_length=512,
        num_beams=4,
    )
    repo = folder / "repo"
    model.save_pretrained(repo)
    tokenizer.save_pretrained(repo)
    return repo


def build_wmt_like_dataset(
    folder: Path,
    pairs: list[tuple[str, str]],
    files: int = 3,
    group: int = 10,
    validation: int = 24,
    overlap: int = 4,
    config: str = "zh-en",
) -> Path:
    """WMT19's layout: ``zh-en/train-000NN-of-000MM.parquet`` of several row groups and a
    ``zh-en/validation-00000-of-00001.parquet``, rows in a ``translation`` {en, zh} struct.
    ``config="de-en"`` lays out WMT14's de-en the same way ({en, de}).

    The last ``overlap`` validation rows are also train rows, so that a run has test pairs
    to drop from its training side.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(path: Path, rows: list[tuple[str, str]]) -> None:
        en = pa.array([s for s, _ in rows])
        zh = pa.array([t for _, t in rows])
        other = config.split("-")[0]
        names = ["en", other]
        table = pa.table({"translation": pa.StructArray.from_arrays([en, zh], names=names)})
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path, row_group_size=group)

    test, train = pairs[:validation], pairs[validation - overlap :]
    size = -(-len(train) // files)
    for f in range(files):
        write(
            folder / config / f"train-{f:05d}-of-{files:05d}.parquet",
            train[f * size : (f + 1) * size],
        )
    write(folder / config / "validation-00000-of-00001.parquet", test)
    (folder / "README.md").write_text(
        f"---\nconfigs:\n- config_name: {config}\n---\n", encoding="utf-8"
    )
    return folder
