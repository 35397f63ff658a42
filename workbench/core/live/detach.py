"""Starting a run in a process of its own, detached from any terminal: ``train --detach``,
Start in a browser tab, and a run the TUI leaves training when it quits.

The process gets a new session (no terminal can send it SIGHUP), standard input from
``/dev/null``, and its output appended to the run's ``train.log`` -- never a pipe, which
fills and hangs the run once nobody reads it. It is ``workbench train`` run as a module,
so this package needs nothing of the training code. The caller made (or, to resume,
picked) the run folder already, so it can print where the run is at once; this waits only
until the new process holds the folder (:class:`~workbench.core.live.writer.RunWriter`), a
second or two.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from workbench.core.live.liveness import Liveness, run_liveness
from workbench.core.live.stop_request import wait_until_ended
from workbench.core.live.writer_record import WriterRecord
from workbench.core.run_folder.layout import RunFolder
from workbench.errors import WorkbenchError

#: How long to wait for the detached process to take its run folder.
HOLD_WAIT_SECONDS = 25.0
#: The train flags that make ``workbench train`` the detached process.
DETACHED_FLAGS = ("--headless", "--no-interact", "--detached")


def start_detached(train_args: list[str], run_dir: Path) -> subprocess.Popen[bytes]:
    """``workbench train ARGS --run-dir RUN_DIR`` in a new session, output to its log."""
    argv = [sys.executable, "-m", "workbench", "train", *train_args, *DETACHED_FLAGS]
    argv += ["--run-dir", str(run_dir)]
    with RunFolder(run_dir).log.open("ab") as log:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            # No progress bars: redrawn with carriage returns, they would fill the log.
            env={
                **os.environ,
                "PYTHONUNBUFFERED": "1",
                "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
            },
        )


def start_detached_run(train_args: list[str], run_dir: Path) -> subprocess.Popen[bytes]:
    """``workbench train TRAIN_ARGS`` detached in ``run_dir``; its process once it holds
    the folder, or one line naming the log if it failed at once."""
    process = start_detached(train_args, run_dir)
    live = wait_until_held(process, run_dir)  # a start that fails names the log
    if not live.live:
        raise WorkbenchError(
            f"the detached run {live.status} at once ({live.why()}); see {RunFolder(run_dir).log}"
        )
    return process


def continue_detached(run_dir: Path, preset: str, output_dir: str) -> subprocess.Popen[bytes]:
    """Continue a stopped run (its config.json, its last checkpoint) in a detached process,
    once this process has let go of its folder; returns when that process holds it."""
    wait_until_ended(run_dir, HOLD_WAIT_SECONDS)  # the run's end is written just after
    process = start_detached(["--preset", preset, "--output-dir", output_dir], run_dir)
    wait_until_held(process, run_dir)
    return process


def wait_until_held(
    process: subprocess.Popen[bytes], run_dir: Path, timeout: float = HOLD_WAIT_SECONDS
) -> Liveness:
    """Wait until ``process`` holds ``run_dir``; one line with its log's end if it fails."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record = WriterRecord.read(run_dir)
        if record is not None and record.pid == process.pid:
            return run_liveness(run_dir)
        if process.poll() is not None:
            break
        time.sleep(0.1)
    code = process.poll()
    if code is None:  # not one run more on a retry: this one goes
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGTERM)
    tail = last_lines(RunFolder(run_dir).log, 1)
    raise WorkbenchError(
        "the detached run "
        + (
            f"exited with status {code}"
            if code is not None
            else f"did not start in {timeout:.0f} s"
        )
        + (f": {tail[0]}" if tail else "")
        + f"; see {RunFolder(run_dir).log}"
    )


def last_lines(path: Path, count: int) -> list[str]:
    """The last ``count`` non-empty lines of a text file ([] if missing)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    return [line for line in lines if line.strip()][-count:]


def let_go_of_terminal(fds: list[int] | tuple[int, ...] = (0, 1, 2)) -> None:
    """The terminal is gone (SIGHUP, EIO): point the standard streams that were the
    terminal (``fds``) at ``/dev/null``, so that no later write -- ours, a library's print
    or warning, a UI driver's -- fails and ends the run."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        with contextlib.suppress(OSError):
            os.dup2(devnull, fd)
    os.close(devnull)
