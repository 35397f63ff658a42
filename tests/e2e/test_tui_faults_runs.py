"""The TUI survives: failing workers, bad numbers, odd console input and SIGTERM.

The tests that train (or build), split from tests/tui/test_tui_faults.py, whose other tests do
not.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

from tests.helpers.runs import tiny_toml
from workbench.core.train.checkpoints import last_complete_checkpoint

TINY_TOML = tiny_toml(epochs=30)


class Terminal:
    """A real pseudo-terminal running ``workbench tui``, its output collected on a thread."""

    def __init__(self, cwd: Path) -> None:
        master, slave = pty.openpty()
        termios.tcsetwinsize(slave, (30, 100)) if hasattr(termios, "tcsetwinsize") else None
        import fcntl

        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TERM": "xterm-256color"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "workbench", "tui", "--preset", "demo", "--config", "tiny.toml"],
            cwd=cwd,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self.output = bytearray()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.output.extend(chunk)

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def wait_for(self, predicate, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"not reached; output tail: {bytes(self.output[-500:])!r}")
            time.sleep(0.1)


def trained_steps(work: Path) -> int:
    runs = work / "translation_output" / "runs"
    metrics = list(runs.glob("*/metrics.jsonl")) if runs.is_dir() else []
    if not metrics:
        return 0
    lines = metrics[0].read_text(encoding="utf-8").splitlines()
    return sum('"event": "TrainStep"' in line for line in lines)


def test_sigterm_restores_the_terminal_and_stops_with_a_checkpoint(tmp_path: Path):
    """SIGTERM (kill, a batch system's end of job) stops the run with a checkpoint. SIGHUP
    (the terminal closed) lets it train on: tests/test_tui_attach.py."""
    sig = signal.SIGTERM
    (tmp_path / "tiny.toml").write_text(TINY_TOML, encoding="utf-8")
    term = Terminal(tmp_path)
    try:
        term.wait_for(lambda: b"Dataset" in term.output)  # first screen painted
        runs = tmp_path / "translation_output" / "runs"
        for _ in range(30):  # the Training pane is mounted just after the first frame
            term.type("2")
            time.sleep(0.5)
            term.type("s")
            deadline = time.monotonic() + 5
            while not runs.is_dir() and time.monotonic() < deadline:
                time.sleep(0.1)
            if runs.is_dir():
                break
        term.wait_for(lambda: trained_steps(tmp_path) >= 3)
        term.proc.send_signal(sig)
        term.proc.wait(timeout=30)
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    term.reader.join(timeout=5)
    assert b"\x1b[?1049l" in term.output[-2000:]  # left the alternate screen
    assert b"Traceback" not in term.output
    run = next((tmp_path / "translation_output" / "runs").iterdir())
    assert json.loads((run / "summary.json").read_text())["status"] == "stopped"
    assert last_complete_checkpoint(run) is not None
