"""Run folders and reading them back: resume finds unfinished runs, the TUI finished ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RUNS_FOLDER = "runs"
#: The best model of a run (in its folder) and the published one (in the output folder).
BEST_MODEL = "best_model"


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    """A run's summary.json, or None when missing or unreadable."""
    try:
        data = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def run_folders(output_root: Path) -> list[Path]:
    """Run folders under ``output_root``, newest first (their names start with a timestamp)."""
    runs = output_root / RUNS_FOLDER
    if not runs.is_dir():
        return []
    return sorted((p for p in runs.iterdir() if p.is_dir()), reverse=True)


def is_finished(run_dir: Path) -> bool:
    """True when the run's summary says it finished."""
    summary = read_summary(run_dir)
    return bool(summary and summary.get("status") == "finished")


def latest_finished_run(output_root: Path) -> tuple[Path, dict[str, Any]] | None:
    """The newest run folder whose summary says it finished."""
    for run in run_folders(output_root):
        summary = read_summary(run)
        if summary and summary.get("status") == "finished":
            return run, summary
    return None
