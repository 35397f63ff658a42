"""Sweep workers as real processes, for the tests of several workers on one study
(tests/cli/test_cli_sweep.py on SQLite, tests/cli/test_sweep_postgres.py on PostgreSQL,
tests/e2e/test_sweep_runs.py training).

A worker is ``python -m workbench sweep ...``, or ``python -m tests.helpers.fake_training sweep
...`` when its trials run the stand-in trainer (tests/helpers/fake_training.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.cli import Started, command_env, start_cli
from tests.helpers.fake_training import HOLD_VARIABLE, SECONDS_VARIABLE, WRITES_FILE
from tests.helpers.paths import REPO


def sweep_args(output: Path, *extra: str) -> list[str]:
    """``workbench sweep`` of the tiny demo recipe (``tiny.toml`` beside ``output``)."""
    return [
        "sweep",
        "--preset",
        "demo",
        "--config",
        str(output.parent / "tiny.toml"),
        "--output-dir",
        str(output),
        *extra,
    ]


def worker_env(fake_seconds: float | None = None, hold: Path | None = None) -> dict[str, str]:
    """The environment of a worker process; see :func:`start_worker`."""
    env = command_env({"PYTHONPATH": str(REPO)})
    if fake_seconds is not None:
        env[SECONDS_VARIABLE] = str(fake_seconds)
    if hold is not None:
        env[HOLD_VARIABLE] = str(hold)
    return env


def start_worker(
    args: list[str], cwd: Path, fake_seconds: float | None = None, hold: Path | None = None
) -> Started:
    """A worker process; with ``fake_seconds`` (or ``hold``) its trials run the stand-in, a
    new one writing its checkpoint at once and then "training" that long (or until the
    file ``hold`` exists)."""
    fake = fake_seconds is not None or hold is not None
    if not fake:  # the installed workbench: PYTHONPATH is for the stand-in's module
        return start_cli(*args, cwd=cwd, stderr=subprocess.STDOUT)
    return subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.fake_training" if fake else "workbench", *args],
        cwd=cwd,
        env=worker_env(fake_seconds, hold),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for_checkpoints(
    output: Path, workers: list[Started], count: int = 1, timeout: float = 240
) -> list[Path]:
    """The first ``count`` run folders once each has a complete checkpoint (the workers
    still training)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for worker in workers:
            assert worker.poll() is None, worker.stdout.read() if worker.stdout else ""
        ready = sorted(
            ckpt.parents[1]
            for ckpt in (output / "runs").glob("*/checkpoints/checkpoint-*")
            if (ckpt / "optimizer.pt").is_file() and (ckpt / "trainer_state.json").is_file()
        )
        if len(ready) >= count:
            return ready[:count]
        time.sleep(0.2)
    raise AssertionError(f"not {count} run folders with a checkpoint in time")


def writers(run_dir: Path) -> list[int]:
    """The process of each write the stand-in made into ``run_dir``, in order."""
    lines = (run_dir / WRITES_FILE).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["pid"] for line in lines]


def one_writer_at_a_time(pids: list[int]) -> bool:
    """Each process wrote in one stretch: none wrote again once another had written."""
    stretches = [pid for i, pid in enumerate(pids) if i == 0 or pids[i - 1] != pid]
    return len(stretches) == len(set(stretches))


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes, to see that nothing was written."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
