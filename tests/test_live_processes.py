"""Runs that outlive their terminal, with real processes, signals and a real
pseudo-terminal: a headless run whose terminal closes trains on to its end; a detached
run is watched, refused a second writer, stopped from another command, resumed, and
killed with -9.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import pty
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.conftest import TINY_DEMO_ARGS, run_cli, tiny_toml
from workbench.core.live.liveness import run_liveness
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


def runs_json(work: Path) -> list[dict]:
    listed = run_cli("runs", "--json", cwd=work)
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


def start_detached_run(work: Path) -> tuple[Path, WriterRecord]:
    """A tiny run of LONG_TOML with ``--detach`` in ``work``: its folder and its writer."""
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
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"},
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=take_terminal,
    )
    os.close(slave)
    return proc, master


def drain(master: int, until: float) -> bytes:
    """What the terminal showed, read until ``until`` (monotonic) or its end."""
    out = bytearray()
    while time.monotonic() < until:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        if b"step " in out and b"/" in out[out.rfind(b"step ") :]:
            break
    return bytes(out)


@pytest.mark.slow
def test_a_headless_run_whose_terminal_closes_trains_to_its_end(tmp_path: Path):
    """The SSH link drops: the terminal closes under the run (SIGHUP, then EIO on every
    write). The run goes on, its lines in train.log, and finishes."""
    (tmp_path / "tiny.toml").write_text(tiny_toml(epochs=6), encoding="utf-8")
    proc, master = in_a_terminal([sys.executable, "-m", "workbench", *TINY_DEMO_ARGS], tmp_path)
    try:
        shown = drain(master, time.monotonic() + 300)
        assert b"step " in shown, shown[-2000:]
        os.close(master)  # the terminal goes away: SIGHUP to the session
        assert proc.wait(timeout=600) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    run = only_run(tmp_path)
    assert json.loads((run / "summary.json").read_text())["status"] == "finished"
    steps = train_steps(run)
    assert steps
    assert all(a < b for a, b in itertools.pairwise(steps))
    log = (run / "train.log").read_text(encoding="utf-8")
    assert "[done]" in log
    assert "Traceback" not in log
    assert run_liveness(run).status == "finished"


@pytest.mark.slow
def test_a_detached_run_is_watched_refused_stopped_and_resumed(tmp_path: Path):
    (tmp_path / "tiny.toml").write_text(LONG_TOML, encoding="utf-8")
    started = run_cli(*TINY_DEMO_ARGS, "--detach", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    run = only_run(tmp_path)
    assert f"run folder: translation_output/runs/{run.name}" in started.stdout
    assert f"workbench stop {run.name}" in started.stdout
    assert f"workbench logs {run.name} --follow" in started.stdout
    pid = WriterRecord.read(run).pid  # type: ignore[union-attr]
    try:
        wait_until(lambda: len(train_steps(run)) >= 3, "three steps")
        (row,) = runs_json(tmp_path)
        assert row["status"] == "running"
        assert row["writer"].startswith(f"pid {pid} ")
        assert row["step"] >= 3
        assert row["max_steps"] > row["step"]
        # A second writer is refused in one line.
        second = run_cli(*TINY_DEMO_ARGS, "--resume", cwd=tmp_path)
        assert second.returncode == 2
        (line,) = second.stderr.strip().splitlines()
        assert f"run {run.name} is being trained by pid {pid}" in line
        # Stopped from another command: at the next step, with a checkpoint.
        stopped = run_cli("stop", run.name, cwd=tmp_path)
        assert stopped.returncode == 0, stopped.stderr
        assert f"{run.name}: stopped" in stopped.stdout
        assert json.loads((run / "summary.json").read_text())["status"] == "stopped"
    finally:
        if run_liveness(run).live:
            os.kill(pid, signal.SIGKILL)
    # The log says it all, as followed from another terminal.
    logs = run_cli("logs", run.name, cwd=tmp_path)
    assert "stop requested (by workbench stop on host" in logs.stdout
    assert "stopped at step" in logs.stdout
    assert logs.stdout.rstrip().endswith(")")
    resumed = run_cli(*TINY_DEMO_ARGS, "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert json.loads((run / "summary.json").read_text())["status"] == "finished"
    steps = train_steps(run)  # one writer at a time: every step once, in order
    assert all(a < b for a, b in itertools.pairwise(steps))
    assert runs_json(tmp_path)[0]["status"] == "finished"


@pytest.mark.slow
def test_a_detached_run_killed_with_9_reads_killed(tmp_path: Path):
    run, record = start_detached_run(tmp_path)
    try:
        wait_until(lambda: len(train_steps(run)) >= 2, "two steps")
    finally:
        os.kill(record.pid, signal.SIGKILL)
    wait_until(lambda: runs_json(tmp_path)[0]["status"] == "killed", "killed", timeout=60)
    stop = run_cli("stop", run.name, cwd=tmp_path)
    assert stop.returncode == 2
    assert "is not running (status: killed" in stop.stderr
