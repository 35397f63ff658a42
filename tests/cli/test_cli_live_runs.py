"""A run folder's one writer as the command line meets it: ``train --resume`` of a run
another process trains is refused in one line naming the holder. The writer, its record
and its lock are tested with real processes in tests/unit/test_live_runs.py."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from workbench.core.live.writer import RunFolderBusy, RunWriter


def test_a_resume_of_a_run_with_a_writer_is_one_line_naming_it(cli, tmp_path: Path):
    """--resume means the newest unfinished run; this one has a writer (this process holds
    it, as a training process would), so the CLI says what the writer's refusal says, in
    one line, no traceback."""
    run = tmp_path / "out" / "runs" / "20260101-000000-demo"
    run.mkdir(parents=True)
    holder = RunWriter(threading.Event())
    holder.hold(run)
    try:
        with pytest.raises(RunFolderBusy) as refused:
            RunWriter(threading.Event()).hold(run)
        resumed = cli(
            "train", "--headless", "--preset", "demo", "--resume", "--no-interact",
            "--output-dir", str(tmp_path / "out"),
        )  # fmt: skip
    finally:
        holder.release("finished")
    assert resumed.returncode == 2
    assert resumed.stderr.strip().splitlines() == [f"workbench: error: {refused.value}"]
