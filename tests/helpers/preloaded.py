"""``python -m workbench`` without paying for torch's import each time: a server
(tests/helpers/preloaded_server.py) that has imported the heavy libraries forks a child per
command, and the child runs the CLI as a fresh interpreter would.

Why: on the two cores the suite runs on, importing torch, transformers and the trainer
costs 3.5 to 5 s of CPU per process, and the tests start over a hundred such processes.

The child is a real process with its own pid, working folder, environment, stdin, stdout,
stderr, signals and exit status; only the imports of the preloaded libraries are shared.
Those read some variables once, at import (huggingface_hub its endpoint, offline mode and
cache folders; torch its thread count; Python its own ``PYTHON*`` flags), so a server
serves only the commands whose environment equals its own but for CALL_TIME_VARIABLES.
A command with a Hub of its own (a test's endpoint, cache and proxies) gets a hub-free
server, which preloads no Hub library; a command whose environment differs otherwise gets
a fresh interpreter (tests/helpers/cli.py's run_cli and start_cli decide). Here: the
client, ``run`` (as subprocess.run) and ``Child`` (as subprocess.Popen)."""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import locale
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tests.helpers import preloaded_server
from tests.helpers.preloaded_server import HEADER, PRELOADED

#: The Hub's variables: only these may differ between a hub-free server and its commands.
HUB_VARIABLES = (
    "HF_", "TRANSFORMERS_", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
    "http_proxy", "https_proxy", "all_proxy", "no_proxy",
)  # fmt: skip

#: Variables no preloaded library reads at import: they may differ between the server and
#: a command it runs. Each test has its own WORKBENCH_CACHE; pytest names the current test;
#: torch reads TORCHINDUCTOR_CACHE_DIR when it compiles, and sets it in the process that
#: compiles first (a test that compiles in the test process).
CALL_TIME_VARIABLES = ("WORKBENCH_", "PYTEST_", "TORCHINDUCTOR_CACHE_DIR")

#: Servers kept at once by one test process, each for one environment.
MOST_SERVERS = 3

_Key = tuple[str, tuple[tuple[str, str], ...]]


def key_of(env: dict[str, str], kind: str = "full") -> _Key:
    """What a server's children must share: the environment but CALL_TIME_VARIABLES, and
    for a hub-free server but HUB_VARIABLES as well."""
    free = CALL_TIME_VARIABLES + (HUB_VARIABLES if kind == "hub-free" else ())
    return kind, tuple(sorted((k, v) for k, v in env.items() if not k.startswith(free)))


class Server:
    """A running server (this file as a script) of one kind, for one environment."""

    def __init__(self, key: _Key, env: dict[str, str]) -> None:
        self.folder = tempfile.mkdtemp(prefix="wb-preloaded-")
        self.path = os.path.join(self.folder, "socket")
        self.process = subprocess.Popen(
            [sys.executable, preloaded_server.__file__, self.path, key[0]],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
        )
        atexit.register(self.stop)
        assert self.process.stdout is not None
        self.ready = self.process.stdout.readline() == b"ready\n"

    def alive(self) -> bool:
        return self.ready and self.process.poll() is None

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


_servers: dict[_Key, Server] = {}
#: How many commands asked for each server. The first command of an environment runs in
#: a fresh interpreter (most tests that set a variable of their own run one command), the
#: second starts a server; the suite's own environment has one asked for already.
_asked: Counter[_Key] = Counter()
_lock = threading.Lock()


def expect(env: dict[str, str]) -> None:
    """Start a server on the first command with this environment, not the second."""
    _asked[key_of(env)] += 1


def server_for(env: dict[str, str]) -> Server | None:
    """The server whose children may run a command with this environment, or None: the
    command then needs a fresh interpreter. A full server is wanted, else a hub-free one;
    one is started for an environment asked for before, while fewer than MOST_SERVERS run."""
    # A command with an endpoint of its own (a test's Hub) would start a full server for
    # its test's commands alone: it shares the hub-free one.
    kinds = ["hub-free"] if "HF_ENDPOINT" in env else list(PRELOADED)
    with _lock:
        keys = [key_of(env, kind) for kind in kinds]
        server = next((_servers[key] for key in keys if key in _servers), None)
        if server is None:
            for key in keys:
                _asked[key] += 1
            wanted = next((key for key in keys if _asked[key] >= 2), None)
            if wanted is None or len(_servers) >= MOST_SERVERS:
                return None
            server = _servers[wanted] = Server(wanted, env)
    return server if server.alive() else None


def run(
    server: Server,
    args: list[str],
    *,
    cwd: Path | None,
    env: dict[str, str],
    input: str | bytes | None,
    text: bool,
    timeout: float,
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run([python, -m, workbench, *args], capture_output=True, ...)`` in a child
    of the server: the same CompletedProcess, or TimeoutExpired after killing the child."""
    shown = [sys.executable, "-m", "workbench", *args]
    stdin_r, stdin_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    conn = _send(server, args, cwd, env, [stdin_r, out_w, err_w])
    for fd in (stdin_r, out_w, err_w):
        os.close(fd)
    data = input.encode(locale.getpreferredencoding(False)) if isinstance(input, str) else input
    outputs: dict[int, bytes] = {}
    threads = [
        threading.Thread(target=_write_all, args=(stdin_w, data or b""), daemon=True),
        threading.Thread(target=_read_all, args=(out_r, outputs), daemon=True),
        threading.Thread(target=_read_all, args=(err_r, outputs), daemon=True),
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    replies = _Replies(conn)
    pid = int(replies.line(deadline).split()[1])
    timed_out, line = False, ""
    try:
        try:
            line = replies.line(deadline)
        except TimeoutError:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            line = replies.line(None)
    finally:
        if not line:  # interrupted in between: leave no child running
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    returncode = int(line.split()[1])
    conn.close()
    for thread in threads:
        thread.join()
    stdout: str | bytes = outputs.get(out_r, b"")
    stderr: str | bytes = outputs.get(err_r, b"")
    if text:
        stdout, stderr = _decoded(outputs.get(out_r, b"")), _decoded(outputs.get(err_r, b""))
    if timed_out:
        raise subprocess.TimeoutExpired(shown, timeout, output=stdout, stderr=stderr)
    return subprocess.CompletedProcess(shown, returncode, stdout, stderr)


class Child:
    """A command started in a server's child, for a test that drives it while it runs: the
    parts of subprocess.Popen the tests use (pid, args, returncode, stdout and stderr as
    text pipes, poll, wait, send_signal, kill, terminate, communicate). stdin is
    /dev/null; ``stdout`` is PIPE or an open file, ``stderr`` PIPE or STDOUT."""

    def __init__(
        self, server: Server, args: list[str], *, cwd: Path, env: dict[str, str],
        stdout: Any, stderr: int,
    ) -> None:  # fmt: skip
        self.args = [sys.executable, "-m", "workbench", *args]
        self.returncode: int | None = None
        ends, readers = [os.open(os.devnull, os.O_RDONLY)], []
        targets: tuple[Any, Any] = (stdout, stderr)
        for target in targets:
            if target == subprocess.PIPE:
                read, write = os.pipe()
                readers.append(read)
                ends.append(write)
            elif target == subprocess.STDOUT:
                ends.append(os.dup(ends[1]))
            else:
                ends.append(os.dup(target.fileno()))
        self._replies = _Replies(_send(server, args, cwd, env, ends))
        for fd in ends:
            os.close(fd)
        self.pid = int(self._replies.line(None).split()[1])
        pipes = iter(readers)
        self.stdout = _text(next(pipes)) if stdout == subprocess.PIPE else None
        self.stderr = _text(next(pipes)) if stderr == subprocess.PIPE else None

    def poll(self) -> int | None:
        if self.returncode is None:
            with contextlib.suppress(TimeoutError):
                self.returncode = int(self._replies.line(time.monotonic()).split()[1])
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            deadline = None if timeout is None else time.monotonic() + timeout
            try:
                self.returncode = int(self._replies.line(deadline).split()[1])
            except TimeoutError:
                raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def communicate(self, timeout: float | None = None) -> tuple[Any, Any]:
        """Read stdout and stderr to their end, then wait (as Popen.communicate)."""
        read: dict[int, str] = {}
        streams = [s for s in (self.stdout, self.stderr) if s is not None]
        threads = [
            threading.Thread(target=lambda s=s: read.update({id(s): s.read()}), daemon=True)
            for s in streams
        ]
        for thread in threads:
            thread.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in threads:
            thread.join(None if deadline is None else max(deadline - time.monotonic(), 0))
            if thread.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.wait(None if deadline is None else max(deadline - time.monotonic(), 0))
        return (
            None if self.stdout is None else read[id(self.stdout)],
            None if self.stderr is None else read[id(self.stderr)],
        )


def _send(server: Server, args: list[str], cwd: Path | None, env: dict[str, str],
          fds: list[int]) -> socket.socket:  # fmt: skip
    """Ask ``server`` for a child running ``args`` with ``fds`` as its stdin, stdout and
    stderr; returns the connection its pid and exit status come back on."""
    request = json.dumps({"args": args, "cwd": str(cwd or os.getcwd()), "env": env}).encode()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(server.path)
    socket.send_fds(conn, [HEADER.pack(len(request)) + request], fds)
    return conn


def _text(fd: int) -> io.TextIOWrapper:
    """A pipe's end as Popen(text=True) makes it: the locale's encoding, universal newlines."""
    return io.TextIOWrapper(open(fd, "rb"), encoding=locale.getpreferredencoding(False))


class _Replies:
    """The server's reply lines on ``conn``, each read by a deadline."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buffer = b""

    def line(self, deadline: float | None) -> str:
        """The next line; TimeoutError if none came by ``deadline`` (a deadline already
        past looks once without waiting)."""
        while b"\n" not in self.buffer:
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            self.conn.settimeout(left)
            try:
                chunk = self.conn.recv(4096)
            except BlockingIOError:
                raise TimeoutError from None
            if not chunk:
                raise ConnectionError("the preloaded server closed the connection")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()


def _write_all(fd: int, data: bytes) -> None:
    try:
        with open(fd, "wb") as pipe:
            pipe.write(data)
    except BrokenPipeError:
        pass  # as communicate(): a child that reads no stdin is not an error


def _read_all(fd: int, into: dict[int, bytes]) -> None:
    with open(fd, "rb") as pipe:
        into[fd] = pipe.read()


def _decoded(data: bytes) -> str:
    """As ``subprocess.run(text=True)`` decodes: the locale's encoding, universal newlines."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")
