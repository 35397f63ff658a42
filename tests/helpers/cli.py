"""The command line as a test runs it: ``python -m workbench`` in a subprocess, and the
tiny demo run's arguments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers import preloaded
from tests.helpers.paths import REPO


def command_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """A command's environment: the test's, offline, output unbuffered, and ``env``."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **(env or {})}


#: The environment of the suite's commands but the variables a test sets: they share a
#: server of preloaded libraries from the first command on.
SUITE_ENV = command_env()
preloaded.expect(SUITE_ENV)

#: ``workbench`` arguments of the tiny demo run (``tiny.toml`` in the working folder).
TINY_DEMO_ARGS = (
    "train", "--headless", "--preset", "demo", "--config", "tiny.toml", "--no-interact",
)  # fmt: skip


def run_cli(
    *args: str,
    cwd: Path | None = None,
    input: str | bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    fake_training: bool = False,
    fresh: bool = False,
):
    """Run ``python -m workbench`` in a subprocess and return the CompletedProcess; with
    ``fake_training``, ``python -m tests.helpers.fake_training`` (the CLI as it is, the stand-in
    trainer in place of run_training) for a test of the CLI's contract, not of training.

    The process is a child of tests/helpers/preloaded.py's server, which has torch and
    transformers imported already, when its environment allows (see there); with ``fresh``,
    or for fake_training, it is a new interpreter (a test of what a command imports)."""
    full_env = command_env(env)
    text = not isinstance(input, bytes)
    server = None if fresh or fake_training else preloaded.server_for(full_env)
    if server is not None:
        return preloaded.run(
            server, list(args), cwd=cwd, env=full_env, input=input, text=text, timeout=timeout
        )
    if fake_training:
        full_env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.helpers.fake_training" if fake_training else "workbench",
            *args,
        ],
        cwd=cwd,
        input=input,
        env=full_env,
        capture_output=True,
        text=text,
        timeout=timeout,
    )


#: A command a test drives while it runs: a server's child, or a new interpreter.
Started = subprocess.Popen[str] | preloaded.Child


def start_cli(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    stdout: Any = subprocess.PIPE,
    stderr: int = subprocess.PIPE,
) -> Started:
    """Start ``python -m workbench`` for a test that drives it while it runs (reads its lines,
    signals it, kills it): a child of tests/helpers/preloaded.py's server when the
    environment allows, as run_cli's commands are, else a new interpreter. stdin is
    /dev/null; text pipes."""
    full_env = command_env(env)
    server = preloaded.server_for(full_env)
    if server is not None:
        return preloaded.Child(
            server, list(args), cwd=cwd, env=full_env, stdout=stdout, stderr=stderr
        )
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        text=True,
    )
