"""Run folders and reading them back: resume finds unfinished runs, the TUI finished ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RUNS_FOLDER = "runs"
#: The best model of a run (in its folder) and the published one (in the output folder).
BEST_MODEL = "best_model"
#: Every console translation, appended in the output folder (the report reads it back).
HISTORY_FILE = "console_history.jsonl"
#: A scratch run's untrained model (the "before" side in the console and the report).
INITIAL_MODEL = "initial_model"


def read_json_dict(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``, or None when missing, unreadable or not an object.

    For the files a run or a model folder may hold or lack (a run killed early, a model
    saved elsewhere): readers treat them all as optional.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    """A run's summary.json, or None when missing or unreadable."""
    return read_json_dict(run_dir / "summary.json")


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
