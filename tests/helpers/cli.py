"""The command line as a test runs it: ``python -m workbench`` in a subprocess, and the
tiny demo run's arguments."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.helpers.paths import REPO

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
):
    """Run ``python -m workbench`` in a subprocess and return the CompletedProcess; with
    ``fake_training``, ``python -m tests.helpers.fake_training`` (the CLI as it is, the stand-in
    trainer in place of run_training) for a test of the CLI's contract, not of training."""
    import subprocess

    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **(env or {})}
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
        text=not isinstance(input, bytes),
        timeout=timeout,
    )
