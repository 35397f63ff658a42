"""Runs side by side (workbench.core.experiments.table; ``workbench runs`` is in
tests/cli/test_cli_run_list.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.runs import three_run_folders
from workbench.core.experiments.table import list_runs, run_row_line
from workbench.core.records.run_records import EpochLog
from workbench.core.records.summary import RunSummary, best_epoch


@pytest.fixture
def output(tmp_path: Path) -> Path:
    """Three run folders as the workbench writes them: finished, stopped, killed early."""
    return three_run_folders(tmp_path / "out")


def test_every_run_is_listed_newest_first_with_what_it_changed_and_scored(output: Path):
    rows = list_runs(output)
    assert [r.status for r in rows] == ["killed", "stopped", "finished"]
    killed, stopped, finished = rows
    assert finished.changed == {"epochs": 4}
    assert stopped.changed == {"learning_rate": 5e-4}
    assert killed.changed == {}  # as its preset; output_dir and precision are not choices
    assert finished.best_epoch == 2.0
    assert finished.steps == 120
    line = run_row_line(finished)
    assert line.startswith("20260101-100000-demo  demo  finished  4 epochs / 120 steps in 1m15s")
    assert "best epoch 2" in line
    assert "epochs=4" in line
    assert "val BLEU 0.01 → 8.70 (7.50…9.90)" in line
    assert "test BLEU 0.02 → 9.50 (8.30…10.70)" in line
    # What a stopped or killed run lacks is a dash, never a made-up 0.00.
    assert "test BLEU —" in run_row_line(stopped)
    assert "BLEU 0.00" not in run_row_line(stopped)
    assert "— steps in —" in run_row_line(killed)
    assert "as preset" in run_row_line(killed)


def test_the_best_epoch_is_the_first_of_equal_validation_scores():
    assert (
        best_epoch(
            RunSummary(
                epochs=[EpochLog(epoch=1.0, eval_bleu=2.0), EpochLog(epoch=2.0, eval_bleu=2.0)]
            )
        )
        == 1.0
    )
    assert best_epoch(RunSummary()) is None


def test_an_ended_run_is_read_once_until_one_of_its_files_changes(output: Path):
    """The TUI lists the runs every two seconds: an ended run's row is kept while its
    files' stamps (inode, size, modification time) stay, and read again when one moves."""
    finished = output / "runs" / "20260101-100000-demo"
    summary = finished / "summary.json"
    first = {r.run_id: r for r in list_runs(output)}["20260101-100000-demo"]
    assert first.steps == 120
    # Same size and modification time, other content: the kept row answers.
    stat = summary.stat()
    text = summary.read_text(encoding="utf-8")
    summary.write_text(text.replace('"global_step": 120', '"global_step": 121'), "utf-8")
    os.utime(summary, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert summary.stat().st_size == stat.st_size
    kept = {r.run_id: r for r in list_runs(output)}["20260101-100000-demo"]
    assert kept is first
    # A rewrite that moves the stamp: read again.
    os.utime(summary, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    again = {r.run_id: r for r in list_runs(output)}["20260101-100000-demo"]
    assert again.steps == 121
