"""The command line as a test runs it: in this process (the ``cli`` fixture), or in a new
interpreter (``run_cli``, ``start_cli``, and ``imports_of`` for what a command imports);
and the tiny demo run's arguments.

``cli("translate", "--model", m, input="I like tea.\\n")`` calls
``workbench.cli.main.main([...])``, as the installed ``workbench`` script does, with the
test's working folder, environment and stdin, and gives back the exit status and what the
command printed (captured as pytest's capsys captures it). Most of the command line's
contract (its lines, its exit codes, the files it leaves) reads the same there and costs no
new interpreter, which spends 3.5 to 5 s of CPU importing torch and transformers before
the command does anything; the suite runs over a hundred commands.

A test runs the command in a process of its own (``run_cli``, ``start_cli``) when the
process is what it checks, and says why at the call: a signal, a kill, a detached run, a
terminal (pty), a process's peak memory, what a command imports, two processes on one
folder or study, or the Hub's import-time environment (huggingface_hub, datasets and
transformers read HF_ENDPOINT, HF_HUB_OFFLINE, HF_HOME and the proxies once, at import: a
command with a Hub of its own needs an interpreter that imports them afresh).

A command run here shares the test's process, so ``cli`` leaves it as it found it: the
signal handlers (``train`` installs its own for Ctrl-C, SIGTERM and SIGHUP), the
environment, the working folder, the loggers and warning filters, torch's thread count; and
it fails a command that leaves a thread of its own running, which would keep a real
process from ending (tests/meta/test_cli_harness.py holds each of these).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


def command_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """A command's environment: the test's, offline, output unbuffered, and ``env``."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **(env or {})}


#: ``workbench`` arguments of the tiny demo run (``tiny.toml`` in the working folder).
TINY_DEMO_ARGS = (
    "train", "--headless", "--preset", "demo", "--config", "tiny.toml", "--no-interact",
)  # fmt: skip

#: Variables a library reads once, when it is imported (the Hub's libraries their endpoint,
#: offline mode, cache folders and proxies; torch and OpenMP their threads; Python its own
#: flags): a command run in this process would not see a new value, so ``cli`` refuses one.
IMPORT_TIME_VARIABLES = (
    "HF_", "HUGGINGFACE_", "TRANSFORMERS_", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
    "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy", "OMP_", "MKL_",
    "TOKENIZERS_", "PYTHON",
)  # fmt: skip

#: How long a thread the command started may take to end once the command has returned.
THREAD_GRACE_SECONDS = 30.0


@dataclass(frozen=True)
class Result:
    """What a command run in this process left: its exit status and what it printed. The
    names are subprocess.CompletedProcess's, so a test reads the same either way."""

    returncode: int
    stdout: str
    stderr: str


def refused_in_one_line(result: Result) -> str:
    """The one line a refused run printed: exit status 2, one line on stderr, no
    traceback, no data read."""
    lines = result.stderr.strip().splitlines()
    assert (result.returncode, len(lines)) == (2, 1), result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert "[data]" not in result.stdout
    return lines[0]


class CommandLine:
    """``workbench`` in this process: call it with the arguments. The ``cli`` fixture is one;
    a fixture of a wider scope makes its own over a MonkeyPatch of that scope."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch

    def __call__(
        self,
        *args: str,
        cwd: Path | None = None,
        input: str | bytes | None = None,
        env: dict[str, str] | None = None,
    ) -> Result:
        """Run ``workbench ARGS`` in ``cwd`` with ``env`` on top of the test's environment
        and ``input`` on stdin (empty when None: not a terminal, as a pipe is)."""
        from workbench.cli.main import main

        env = env or {}
        unseen = read_at_import(env)
        if unseen:
            raise ValueError(
                f"{', '.join(unseen)}: read when a library is imported, so a command run in "
                "this process would not see the value; use run_cli (a new interpreter)"
            )
        stdout, stderr = captured(), captured()
        with self.monkeypatch.context() as patch, process_state_kept():
            if cwd is not None:
                patch.chdir(cwd)
            for name, value in env.items():
                patch.setenv(name, value)
            patch.setattr(sys, "stdin", stdin_of(input))
            patch.setattr(sys, "stdout", stdout)
            patch.setattr(sys, "stderr", stderr)
            code = exit_status(main, list(args))
        return Result(code, written(stdout), written(stderr))


def read_at_import(env: dict[str, str]) -> list[str]:
    """The variables of ``env`` that a library reads at import and that differ from this
    process's: a command with any of them needs a new interpreter."""
    return [
        name
        for name, value in env.items()
        if name.startswith(IMPORT_TIME_VARIABLES) and os.environ.get(name) != value
    ]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> CommandLine:
    """``workbench`` run in this process: ``cli(*args, cwd=, input=, env=)`` -> Result."""
    return CommandLine(monkeypatch)


def captured() -> io.TextIOWrapper:
    """A stdout or stderr that keeps what is written, as pytest's capsys makes one: UTF-8
    text over a byte buffer."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="", write_through=True)


def written(stream: io.TextIOWrapper) -> str:
    """What was written to a :func:`captured` stream."""
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8", "replace")


def stdin_of(input: str | bytes | None) -> io.TextIOWrapper:
    """A pipe's stdin holding ``input``, as a new interpreter opens it: UTF-8 text over a
    byte buffer (``translate`` reads the bytes, ``interact`` the text)."""
    data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    return io.TextIOWrapper(io.BufferedReader(io.BytesIO(data)), encoding="utf-8")


def exit_status(main: Any, args: list[str]) -> int:
    """``main(args)``'s return value, or the status ``SystemExit`` ends an interpreter with
    (argparse's errors and ``--help`` raise it)."""
    try:
        return int(main(args))
    except SystemExit as done:
        if done.code is None:
            return 0
        if isinstance(done.code, int):
            return done.code
        sys.stderr.write(f"{done.code}\n")
        return 1


@contextlib.contextmanager
def process_state_kept() -> Iterator[None]:
    """Put back what a command may change in its process, and fail on a thread it left
    running (see the module docstring)."""
    handlers = {sig: signal.getsignal(sig) for sig in signal.valid_signals()}
    environ = dict(os.environ)
    cwd = os.getcwd()
    loggers = logger_states()
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    before = set(threading.enumerate())
    try:
        with warnings.catch_warnings():  # the filters, put back as they were
            yield
    finally:
        for sig, handler in handlers.items():
            if handler is not None and signal.getsignal(sig) is not handler:
                signal.signal(sig, handler)
        if dict(os.environ) != environ:
            os.environ.clear()
            os.environ.update(environ)
        os.chdir(cwd)
        for logger, (handlers_, level, propagate, disabled) in loggers.items():
            logger.handlers[:] = handlers_
            logger.setLevel(level)  # setLevel, not .level: it clears the loggers' caches
            logger.propagate, logger.disabled = propagate, disabled
        torch = sys.modules.get("torch")
        if threads is not None and torch is not None:
            torch.set_num_threads(threads)
    left = [t for t in set(threading.enumerate()) - before if not t.daemon]
    for thread in left:
        thread.join(THREAD_GRACE_SECONDS)
    running = [t.name for t in left if t.is_alive()]
    assert not running, f"the command left threads running: {running}"


def logger_states() -> dict[logging.Logger, tuple[list[logging.Handler], int, bool, bool]]:
    """Every logger there is, with its handlers, level, propagation and disabled flag."""
    loggers = [logging.getLogger()] + [
        logger
        for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)
    ]
    return {
        logger: (list(logger.handlers), logger.level, logger.propagate, logger.disabled)
        for logger in loggers
    }


def run_cli(
    *args: str,
    cwd: Path | None = None,
    input: str | bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[Any]:
    """``python -m workbench ARGS`` in a new interpreter, to its end: for a test whose
    point is the process (see the module docstring). Text unless ``input`` is bytes."""
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        cwd=cwd,
        input=input,
        env=command_env(env),
        capture_output=True,
        text=not isinstance(input, bytes),
        timeout=timeout,
    )


#: Runs ``workbench`` with ``sys.argv[2:]`` as the installed script does, then prints which
#: of the modules named in ``sys.argv[1]`` (comma-separated) it imported, as a last line.
IMPORTS_OF_A_COMMAND = (
    "import json, sys\nfrom workbench.cli.main import main\n"
    "try:\n    code = main(sys.argv[2:])\nexcept SystemExit as done:\n"
    "    code = done.code if isinstance(done.code, int) else int(done.code is not None)\n"
    "print('\\nIMPORTED', json.dumps([m for m in sys.argv[1].split(',') if m in sys.modules]))\n"
    "sys.exit(code)\n"
)


@dataclass(frozen=True)
class Imports:
    """A command run in a new interpreter: its exit status, what it printed, and which of
    the modules asked about it had imported by its end."""

    returncode: int
    stdout: str
    stderr: str
    imported: list[str]


def imports_of(*args: str, modules: tuple[str, ...], cwd: Path | None = None) -> Imports:
    """``workbench ARGS`` in a new interpreter (this one has imported everything), and which
    of ``modules`` it imported: for a test of what a command leaves unimported."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS_OF_A_COMMAND, ",".join(modules), *args],
        cwd=cwd,
        env=command_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    printed, marker, imported = done.stdout.rpartition("\nIMPORTED ")
    assert marker, done.stdout[-2000:] + done.stderr[-2000:]
    return Imports(done.returncode, printed, done.stderr, json.loads(imported))


#: A command a test drives while it runs.
Started = subprocess.Popen[str]


def start_cli(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    stdout: Any = subprocess.PIPE,
    stderr: int = subprocess.PIPE,
) -> Started:
    """Start ``python -m workbench ARGS`` in a new interpreter, for a test that drives it
    while it runs (reads its lines, signals it, kills it). stdin is /dev/null; text pipes."""
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", *args],
        cwd=cwd,
        env=command_env(env),
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        text=True,
    )
