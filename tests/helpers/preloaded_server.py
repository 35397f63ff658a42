"""The server of tests/helpers/preloaded.py, run as a script (``python
preloaded_server.py SOCKET KIND``): it imports PRELOADED[KIND] once, then forks a child per
request that becomes ``python -m workbench ARGS`` in the request's folder and environment,
with the request's file descriptors as its stdin, stdout and stderr, and reports the child's
pid and exit status on the request's connection.

Only the standard library is imported here before PRELOADED: nothing of tests/ or
workbench/, so every command imports the CLI afresh."""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import runpy
import selectors
import signal
import socket
import struct
import sys
import threading
import traceback
from typing import Any

#: What a server imports before it serves, by kind. "full": each command's heaviest imports.
#: "hub-free": what the heaviest import beside the Hub libraries (huggingface_hub,
#: transformers, datasets, peft), which read the Hub's variables at import, for a command
#: with a Hub of its own (a test's endpoint, cache and proxies); 2.8 of the trainer's 4.1 s.
PRELOADED = {
    "full": (
        "numpy", "torch", "transformers", "transformers.trainer",
        "transformers.trainer_seq2seq", "datasets", "sacrebleu", "sentencepiece", "tokenizers",
        "peft",
    ),
    "hub-free": (
        "numpy", "torch", "torch.distributed.tensor", "torch._dynamo", "sympy", "pandas",
        "pyarrow", "scipy.optimize", "sacrebleu", "sentencepiece", "tokenizers", "safetensors",
    ),
}  # fmt: skip

#: The libraries that read the Hub's variables at import: none in a hub-free server.
HUB_LIBRARIES = ("huggingface_hub", "transformers", "datasets", "peft", "accelerate")

#: A request's first bytes: the length of its JSON (args, cwd, env) that follows.
HEADER = struct.Struct("!I")


def serve(path: str, kind: str) -> None:
    """Import PRELOADED[kind], say ``ready`` on stdout, then fork a child per request on the
    Unix socket at ``path`` until the parent process goes away."""
    import importlib

    for name in PRELOADED[kind]:
        importlib.import_module(name)
    if kind == "hub-free":
        held = [name for name in HUB_LIBRARIES if name in sys.modules]
        assert not held, f"a hub-free server imported {held}"
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(8)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while os.getppid() == parent:
        for key, _ in selector.select(timeout=1.0):
            if key.data is None:
                conn, _ = listener.accept()
                pid, pidfd = _start(conn, listener, selector)
                conn.sendall(f"pid {pid}\n".encode())
                selector.register(pidfd, selectors.EVENT_READ, (conn, pid))
            else:
                conn, pid = key.data
                selector.unregister(key.fileobj)
                os.close(key.fd)
                _, status = os.waitpid(pid, 0)
                with contextlib.suppress(OSError):  # the client gave up on it (its timeout)
                    conn.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
                conn.close()


def _start(
    conn: socket.socket, listener: socket.socket, selector: selectors.BaseSelector
) -> tuple[int, int]:
    """Read one request from ``conn`` and fork its child; returns its pid and pidfd."""
    message, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    (size,) = HEADER.unpack_from(message)
    body = message[HEADER.size :]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ConnectionError("the client left half way through a request")
        body += chunk
    request = json.loads(body)
    pid = os.fork()
    if pid == 0:
        try:
            listener.close()
            conn.close()
            for key in list(selector.get_map().values()):
                if key.data is not None:
                    key.data[0].close()
                    os.close(key.fd)
            _run_child(request, fds)
        finally:
            os._exit(1)  # _run_child exits itself; this only guards against a bug there
    for fd in fds:
        os.close(fd)
    return pid, os.pidfd_open(pid)


def _run_child(request: dict[str, Any], fds: list[int]) -> None:
    """Become ``python -m workbench ARGS`` in the request's folder and environment."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = os.getcwd()  # as ``python -m`` puts it
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _new_stdio()
    sys.argv = ["-m", *request["args"]]
    code: int = 0
    interrupted = False
    try:
        runpy.run_module("workbench", run_name="__main__", alter_sys=True)
    except SystemExit as done:
        code = _exit_code(done.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        interrupted = True
    except BaseException:
        traceback.print_exc()
        code = 1
    # What the interpreter does on its way out: wait for threads, then the atexit calls.
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120
    if interrupted:  # as CPython ends on an uncaught KeyboardInterrupt: killed by SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


def _new_stdio() -> None:
    """Text streams over fds 0-2 made as the interpreter makes them, with the server's own
    encodings and PYTHONUNBUFFERED (both come from the same environment)."""
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    made = []
    for fd, old in ((0, sys.__stdin__), (1, sys.__stdout__), (2, sys.__stderr__)):
        assert old is not None
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        binary: Any = raw
        if fd == 0 or not unbuffered:
            binary = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        made.append(
            io.TextIOWrapper(
                binary,
                encoding=old.encoding,
                errors=old.errors,
                line_buffering=fd == 2 or (fd == 1 and old.line_buffering),
                write_through=fd != 0 and unbuffered,
            )
        )
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made  # type: ignore[misc]


def _exit_code(code: object) -> int:
    """The status ``raise SystemExit(code)`` ends an interpreter with."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2])
