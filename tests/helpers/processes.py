"""Runs in processes of their own, watched from a test: wait for a state or a line, the
steps a run wrote, a detached run, a command under a pseudo-terminal, weights compared."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import subprocess
import termios
import time
from pathlib import Path

from tests.helpers.cli import TINY_DEMO_ARGS, Started, command_env, run_cli
from tests.helpers.runs import tiny_toml
from workbench.core.live.writer_record import WriterRecord

#: Long enough for a test to watch and stop it (tens of seconds), short enough to finish.
LONG_TOML = tiny_toml(epochs=40)


def wait_until(predicate, what: str, timeout: float = 300) -> None:
    """Poll ``predicate`` (a bound on waiting, not a measurement)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.2)


def only_run(work: Path) -> Path:
    (run,) = (work / "translation_output" / "runs").iterdir()
    return run


def train_steps(run: Path) -> list[int]:
    """The steps of the run's TrainStep records, in the order they were written."""
    path = run / "metrics.jsonl"
    if not path.is_file():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r["step"] for r in records if r["event"] == "TrainStep"]


def start_detached_run(work: Path) -> tuple[Path, WriterRecord]:
    """A tiny run of LONG_TOML with ``--detach`` in ``work``: its folder and its writer. The
    detaching command runs in a process of its own, which ends as the run goes on."""
    (work / "tiny.toml").write_text(LONG_TOML, encoding="utf-8")
    started = run_cli(*TINY_DEMO_ARGS, "--detach", cwd=work)
    assert started.returncode == 0, started.stderr
    run = only_run(work)
    record = WriterRecord.read(run)
    assert record is not None
    return run, record


def in_a_terminal(argv: list[str], cwd: Path) -> tuple[subprocess.Popen[bytes], int]:
    """``argv`` with a new pseudo-terminal as its controlling terminal (as an SSH login
    gives one); returns the process and the terminal's master end."""
    master, slave = pty.openpty()

    def take_terminal() -> None:  # after setsid: the terminal becomes the session's
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=command_env(),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=take_terminal,
    )
    os.close(slave)
    return proc, master


def same_weights(a: Path, b: Path) -> bool:
    """True when two saved models hold bit-identical tensors."""
    from safetensors.torch import load_file

    left, right = load_file(str(a / "model.safetensors")), load_file(str(b / "model.safetensors"))
    return left.keys() == right.keys() and all(
        left[k].dtype == right[k].dtype and bool((left[k] == right[k]).all()) for k in left
    )


def wait_for_line(proc: Started, pattern: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    for line in proc.stdout:
        if re.search(pattern, line):
            return
        if time.monotonic() > deadline:
            break
    raise AssertionError(f"never saw {pattern!r}")
