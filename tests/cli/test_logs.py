"""``workbench logs [--follow]``: a run's lines from another terminal, followed until its
writer lets go, through the same look at a run folder as the TUI's (RunReader.look).

The writer is a real RunWriter held by a thread of this process, which writes the run's
train.log as a run does; the command runs in-process (``main([...])``)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.core.live.writer import RunWriter
from workbench.core.run_folder.layout import RunFolder
from workbench.core.run_folder.output_folder import new_run_dir


def say(run: Path, line: str) -> None:
    with RunFolder(run).log.open("a", encoding="utf-8") as log:
        log.write(line + "\n")


def test_follow_prints_each_line_until_the_run_ends_and_how_it_ended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    out = tmp_path / "out"
    run = new_run_dir(out, "demo")
    writer = RunWriter(threading.Event())
    writer.hold(run)
    say(run, "[train]")
    assert main(["logs", run.name, "--output-dir", str(out)]) == 0
    assert capsys.readouterr().out == "[train]\n"  # live, not followed: no end line

    def train_on() -> None:
        time.sleep(1.0)  # the command looks at least once before the run ends
        say(run, "  step 1/2")
        say(run, "[done]")  # the last line, written as the run ends
        writer.release("finished")

    trainer = threading.Thread(target=train_on)
    trainer.start()
    try:
        assert main(["logs", "--follow", "--output-dir", str(out)]) == 0  # the live run
    finally:
        trainer.join(timeout=60)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["[train]", "  step 1/2", "[done]"]
    (end,) = lines[3:]
    assert end.startswith(f"-- {run.name}: finished (pid ")


def test_a_run_without_a_log_says_so_with_its_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    out = tmp_path / "out"
    run = new_run_dir(out, "demo")
    assert main(["logs", "--output-dir", str(out)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{run.name} has no {RunFolder(run).log.name} yet (status: killed)",
        f"-- {run.name}: killed (no writer holds it and it has no summary)",
    ]
