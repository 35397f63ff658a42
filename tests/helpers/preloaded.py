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
    of the server, as subprocess.run does it: the child, communicate, and on a timeout the
    child killed and TimeoutExpired with what it printed."""
    data = input.encode(locale.getpreferredencoding(False)) if isinstance(input, str) else input
    child = Child(
        server, args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        input=data or b"", text=text,
    )  # fmt: skip
    try:
        stdout, stderr = child.communicate(timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        stdout, stderr = child.communicate()
        raise subprocess.TimeoutExpired(child.args, timeout, stdout, stderr) from None
    except BaseException:  # interrupted: leave no child running
        child.kill()
        raise
    return subprocess.CompletedProcess(child.args, child.wait(), stdout, stderr)


class Child:
    """A command started in a server's child: the parts of subprocess.Popen the tests use
    (pid, args, returncode, stdout and stderr as pipes, poll, wait, send_signal, kill,
    terminate, communicate). ``stdout`` is PIPE or an open file, ``stderr`` PIPE or
    STDOUT; stdin is ``input`` through a pipe, or /dev/null; pipes are text as
    Popen(text=True) makes them, or bytes."""

    def __init__(
        self, server: Server, args: list[str], *, cwd: Path | None, env: dict[str, str],
        stdout: Any, stderr: int, input: bytes | None = None, text: bool = True,
    ) -> None:  # fmt: skip
        self.args = [sys.executable, "-m", "workbench", *args]
        self.returncode: int | None = None
        writer = None
        if input is None:
            ends = [os.open(os.devnull, os.O_RDONLY)]
        else:
            stdin, writer = os.pipe()
            ends = [stdin]
        readers = []
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
        if writer is not None:
            threading.Thread(target=_write_all, args=(writer, input), daemon=True).start()
        pipes = iter(readers)
        self.stdout = _pipe(next(pipes), text) if stdout == subprocess.PIPE else None
        self.stderr = _pipe(next(pipes), text) if stderr == subprocess.PIPE else None
        self._read: dict[int, Any] = {}
        self._readers: list[threading.Thread] = []

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
        """Read stdout and stderr to their end, then wait (as Popen.communicate; called
        again after a timeout, it goes on with the same reads)."""
        if not self._readers:
            self._readers = [
                threading.Thread(target=self._read_to_end, args=(stream,), daemon=True)
                for stream in (self.stdout, self.stderr)
                if stream is not None
            ]
            for thread in self._readers:
                thread.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self._readers:
            thread.join(None if deadline is None else max(deadline - time.monotonic(), 0))
            if thread.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.wait(None if deadline is None else max(deadline - time.monotonic(), 0))
        out, err = self.stdout, self.stderr
        return (
            None if out is None else self._read[id(out)],
            None if err is None else self._read[id(err)],
        )

    def _read_to_end(self, stream: Any) -> None:
        self._read[id(stream)] = stream.read()


def _send(server: Server, args: list[str], cwd: Path | None, env: dict[str, str],
          fds: list[int]) -> socket.socket:  # fmt: skip
    """Ask ``server`` for a child running ``args`` with ``fds`` as its stdin, stdout and
    stderr; returns the connection its pid and exit status come back on."""
    request = json.dumps({"args": args, "cwd": str(cwd or os.getcwd()), "env": env}).encode()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(server.path)
    socket.send_fds(conn, [HEADER.pack(len(request)) + request], fds)
    return conn


def _pipe(fd: int, text: bool) -> Any:
    """A pipe's end as Popen makes it: bytes, or text in the locale's encoding with
    universal newlines (text=True)."""
    binary = io.BufferedReader(io.FileIO(fd, "r"))
    return io.TextIOWrapper(binary, encoding=locale.getpreferredencoding(False)) if text else binary


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
