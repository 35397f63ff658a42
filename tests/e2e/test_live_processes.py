"""Runs that outlive their terminal, with real processes, signals and a real
pseudo-terminal: a headless run whose terminal closes trains on to its end; a detached
run is watched, refused a second writer, stopped from another command, resumed, and
killed with -9.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import sys
import time
from pathlib import Path

from tests.helpers.cli import TINY_DEMO_ARGS, run_cli
from tests.helpers.processes import (
    LONG_TOML,
    in_a_terminal,
    only_run,
    start_detached_run,
    train_steps,
    wait_until,
)
from tests.helpers.runs import tiny_toml
from workbench.core.live.liveness import run_liveness
from workbench.core.live.writer_record import WriterRecord


def runs_json(cli, work: Path) -> list[dict]:
    listed = cli("runs", "--json", cwd=work)
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


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


def test_a_detached_run_is_watched_refused_stopped_and_resumed(cli, tmp_path: Path):
    """The detaching command runs in a process of its own, which ends as the run goes on;
    the commands that watch, refuse, stop and resume it run here."""
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
        (row,) = runs_json(cli, tmp_path)
        assert row["status"] == "running"
        assert row["writer"].startswith(f"pid {pid} ")
        assert row["step"] >= 3
        assert row["max_steps"] > row["step"]
        # A second writer is refused in one line.
        second = cli(*TINY_DEMO_ARGS, "--resume", cwd=tmp_path)
        assert second.returncode == 2
        (line,) = second.stderr.strip().splitlines()
        assert f"run {run.name} is being trained by pid {pid}" in line
        # Stopped from another command: at the next step, with a checkpoint.
        stopped = cli("stop", run.name, cwd=tmp_path)
        assert stopped.returncode == 0, stopped.stderr
        assert f"{run.name}: stopped" in stopped.stdout
        assert json.loads((run / "summary.json").read_text())["status"] == "stopped"
    finally:
        if run_liveness(run).live:
            os.kill(pid, signal.SIGKILL)
    # The log says it all, as followed from another terminal.
    logs = cli("logs", run.name, cwd=tmp_path)
    assert "stop requested (by workbench stop on host" in logs.stdout
    assert "stopped at step" in logs.stdout
    assert logs.stdout.rstrip().endswith(")")
    resumed = cli(*TINY_DEMO_ARGS, "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert json.loads((run / "summary.json").read_text())["status"] == "finished"
    steps = train_steps(run)  # one writer at a time: every step once, in order
    assert all(a < b for a, b in itertools.pairwise(steps))
    assert runs_json(cli, tmp_path)[0]["status"] == "finished"


def test_a_detached_run_killed_with_9_reads_killed(cli, tmp_path: Path):
    run, record = start_detached_run(tmp_path)
    try:
        wait_until(lambda: len(train_steps(run)) >= 2, "two steps")
    finally:
        os.kill(record.pid, signal.SIGKILL)
    wait_until(lambda: runs_json(cli, tmp_path)[0]["status"] == "killed", "killed", timeout=60)
    stop = cli("stop", run.name, cwd=tmp_path)
    assert stop.returncode == 2
    assert "is not running (status: killed" in stop.stderr
