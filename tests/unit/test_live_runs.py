"""One writer per run folder, and what every front end reads of a run's life: real
processes race for a folder, get killed with -9 and fork children; the record, the stop
request and the reader of a growing ``metrics.jsonl`` are read back as viewers read them.

The runs that train are in ``test_live_processes.py``; the TUI attaching to one in
``test_tui_attach.py``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from workbench.core.events import JsonlRecorder, Phase, TrainStep
from workbench.core.live.follow import MetricsFollower
from workbench.core.live.liveness import run_liveness
from workbench.core.live.stop_request import leave_stop_request, request_stop
from workbench.core.live.writer import RunFolderBusy, RunWriter
from workbench.core.live.writer_record import STALE_SECONDS, WriterRecord, start_ticks, this_host
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.layout import RunFolder
from workbench.core.run_folder.summary_file import write_summary
from workbench.errors import WorkbenchError

#: A process that holds ``sys.argv[1]`` as its writer until the file ``sys.argv[2]``
#: exists; it prints ``held PID`` or the refusal, and (with a third argument) forks a
#: child that prints ``child PID`` once it runs, then sleeps.
HOLDER = textwrap.dedent(
    """
    import os, sys, threading, time
    from pathlib import Path
    from workbench.core.live.writer import RunFolderBusy, RunWriter
    writer = RunWriter(threading.Event())
    try:
        writer.hold(Path(sys.argv[1]))
    except RunFolderBusy as err:
        print("busy", err, flush=True)
        sys.exit(3)
    print("held", os.getpid(), flush=True)
    if len(sys.argv) > 3:
        if os.fork() == 0:  # fork() returns here after the child's at-fork handlers ran
            print("child", os.getpid(), flush=True)
            time.sleep(60)
            os._exit(0)
    while not Path(sys.argv[2]).exists():
        time.sleep(0.05)
    writer.release("finished")
    """
)


def start_holder(run_dir: Path, release: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run_dir), str(release), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_folder(tmp_path: Path, name: str = "20260101-000000-demo") -> Path:
    folder = tmp_path / "out" / "runs" / name
    folder.mkdir(parents=True)
    return folder


def test_a_second_writer_is_refused_in_one_line_naming_the_holder(tmp_path: Path):
    run = run_folder(tmp_path)
    release = tmp_path / "release"
    holder = start_holder(run, release)
    try:
        assert holder.stdout is not None
        first = holder.stdout.readline().split()
        assert first[0] == "held", holder.stderr.read() if holder.stderr else ""
        assert run_liveness(run).status == "running"
        with pytest.raises(RunFolderBusy) as refused:
            RunWriter(threading.Event()).hold(run)
        message = str(refused.value)
        assert f"pid {first[1]} on host {this_host()}" in message
        assert f"workbench stop {run.name}" in message
        assert "\n" not in message  # the CLI's one line: tests/cli/test_cli_live_runs.py
    finally:
        release.touch()
        holder.wait(timeout=30)
    assert run_liveness(run).status == "finished"
    again = RunWriter(threading.Event())
    again.hold(run)  # free again once the holder has let go
    again.release("finished")


def test_two_processes_racing_for_one_folder_get_one_writer(tmp_path: Path):
    """Eight processes take one folder at once: exactly one holds it."""
    run = run_folder(tmp_path)
    release = tmp_path / "release"
    racers = [start_holder(run, release) for _ in range(8)]
    try:
        firsts = [r.stdout.readline().split() if r.stdout else [] for r in racers]
        held = [f for f in firsts if f and f[0] == "held"]
        busy = [f for f in firsts if f and f[0] == "busy"]
        assert len(held) == 1, firsts
        assert len(busy) == 7, firsts
    finally:
        release.touch()
        for r in racers:
            r.wait(timeout=30)
    assert sorted(r.returncode for r in racers) == [0] + [3] * 7


def test_a_writer_killed_with_9_reads_killed_and_frees_the_folder(tmp_path: Path):
    """Its forked child lives on, but does not keep the folder: the lock was dropped in
    the child, so the folder is free as soon as the writer is gone."""
    run = run_folder(tmp_path)
    holder = start_holder(run, tmp_path / "never", "fork")
    assert holder.stdout is not None
    assert holder.stdout.readline().split()[0] == "held"
    child = int(holder.stdout.readline().split()[1])
    try:
        assert run_liveness(run).status == "running"
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        os.kill(child, 0)  # the child is still alive
        live = run_liveness(run)
        assert live.status == "killed"
        assert "gone without a summary" in live.why()
        taken = RunWriter(threading.Event())
        taken.hold(run)  # nobody holds it now
        taken.release("finished")
    finally:
        os.kill(child, signal.SIGKILL)


def test_a_zombie_writer_is_dead(tmp_path: Path):
    """Killed but not yet reaped by its parent: its pid still answers kill(pid, 0)."""
    run = run_folder(tmp_path)
    holder = start_holder(run, tmp_path / "never")
    assert holder.stdout is not None
    assert holder.stdout.readline().startswith("held")
    os.kill(holder.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while Path(f"/proc/{holder.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert run_liveness(run).status == "killed"
    holder.wait(timeout=30)


def test_each_status_is_read_from_the_record_and_the_summary(tmp_path: Path):
    run = run_folder(tmp_path)
    assert run_liveness(run).status == "killed"  # no writer ever held it, no summary
    write_summary(run, RunSummary(status="finished"))
    assert run_liveness(run).status == "finished"  # a run of an earlier version
    me = os.getpid()
    record = WriterRecord(this_host(), me, start_ticks(me), time.time(), time.time(), "running")
    record.write(run)
    assert run_liveness(run).status == "running"  # this process is alive
    replace(record, state="stopping").write(run)
    assert run_liveness(run).status == "stopping"
    # A reused pid: this process's pid, another start time.
    replace(record, start_ticks=(record.start_ticks or 0) + 1).write(run)
    assert run_liveness(run).status == "killed"
    # Another host, over shared storage: only the heartbeat tells.
    other = replace(record, host="elsewhere", pid=1)
    other.write(run)
    assert run_liveness(run).status == "running"
    replace(other, heartbeat=time.time() - STALE_SECONDS - 1).write(run)
    stale = run_liveness(run)
    assert stale.status == "stale"
    assert "only that host can tell" in stale.why()
    # How a writer ended, newer than the summary an earlier try left.
    replace(record, state="failed", error="RuntimeError: boom").write(run)
    assert run_liveness(run).status == "failed"
    replace(record, state="stopped").write(run)
    assert run_liveness(run).status == "stopped"


def test_a_stop_request_stops_the_writer_and_a_dead_run_says_so(tmp_path: Path):
    run = run_folder(tmp_path)
    stop = threading.Event()
    writer = RunWriter(stop)
    seen: list[Any] = []  # the writer's events: Notes
    writer.on_event = seen.append
    writer.hold(run)
    try:
        live = request_stop(run, "a test")
        assert live.status == "running"
        assert RunFolder(run).stop_request.is_file()
        assert stop.wait(timeout=30)  # the writer polls for it
        deadline = time.monotonic() + 30
        while run_liveness(run).status != "stopping":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert any("stop requested (by a test on host" in note.text for note in seen)
    finally:
        writer.release("stopped")
    assert not RunFolder(run).stop_request.exists()
    with pytest.raises(WorkbenchError, match=r"is not running .status: stopped.*nothing to stop"):
        request_stop(run, "a test")
    # A request left for an earlier writer is not obeyed by the next one.
    leave_stop_request(run, "a test")
    next_writer = RunWriter(threading.Event())
    next_writer.hold(run)
    try:
        assert not RunFolder(run).stop_request.exists()  # taken away before its watch began
    finally:
        next_writer.release("finished")


def test_the_reader_keeps_a_half_written_line_for_its_next_read(tmp_path: Path):
    path = tmp_path / "metrics.jsonl"
    recorder = JsonlRecorder(path)
    recorder(Phase("train"))
    step = TrainStep(1, 10, 0.1, 5.0, 0.001, 1.0, 10.0, 9.0)
    line = json.dumps({"event": "TrainStep", "time": 0.0, **dataclasses.asdict(step)})
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line[:20])  # the writer is in the middle of this line
    follower = MetricsFollower(path)
    assert follower.read_new() == [Phase("train")]
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line[20:] + "\n")
    assert follower.read_new() == [step]
    assert follower.read_new() == []
    # A torn line for good (a killed writer): the next writer ends it before its own.
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"event": "TrainSt')
    JsonlRecorder(path)(Phase("after"))
    assert MetricsFollower(path).read_new() == [Phase("train"), step, Phase("after")]
    assert follower.read_new() == [Phase("after")]
    assert follower.skipped == 1
    # Replaced by a shorter file: read again from the start.
    path.write_text(json.dumps({"event": "Phase", "name": "data", "detail": ""}) + "\n")
    assert follower.read_new() == [Phase("data")]


def test_a_try_to_continue_a_run_that_fails_a_check_leaves_its_status(tmp_path: Path):
    """A refused ``--resume`` (here: a config.json with a value no run accepts) is not the
    run failing: the run stays ``stopped``, as its last writer left it, and its folder is
    free."""
    from tests.helpers.runs import small
    from workbench.core.atomic import write_json
    from workbench.core.train.run_training import run_training

    run = run_folder(tmp_path)
    write_json(run / "config.json", {"preset": "demo", "batch_size": 0})  # refused
    write_summary(run, RunSummary(status="stopped"))
    me = os.getpid()
    WriterRecord(this_host(), me, start_ticks(me), 1.0, 2.0, "stopped").write(run)
    with pytest.raises(WorkbenchError, match="batch_size must be a positive whole number"):
        run_training(small(tmp_path), run_dir=run)
    assert run_liveness(run).status == "stopped"
    assert WriterRecord.read(run) == WriterRecord(
        this_host(), me, start_ticks(me), 1.0, 2.0, "stopped"
    )
    again = RunWriter(threading.Event())
    again.hold(run)  # the folder is free
    again.release("stopped")


def test_report_on_a_live_run_says_to_wait_for_it(tmp_path: Path):
    from workbench.core.report.read import resolve_run_dir

    run = run_folder(tmp_path)
    write_summary(run, RunSummary(status="stopped"))  # an earlier try's, while a resume trains
    writer = RunWriter(threading.Event())
    writer.hold(run)
    try:
        with pytest.raises(WorkbenchError, match=r"is running \(pid \d+ on host .*once it has"):
            resolve_run_dir(run, tmp_path / "out")
    finally:
        writer.release("finished")
    assert resolve_run_dir(run, tmp_path / "out") == run
