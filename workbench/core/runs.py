"""Run folders: where a run writes, and reading them back (resume finds unfinished runs, the
TUI and the report finished ones)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from workbench.core.config import RunConfig, build_config
from workbench.errors import WorkbenchError

RUNS_FOLDER = "runs"
#: The best model of a run (in its folder) and the published one (in the output folder).
BEST_MODEL = "best_model"
#: Every console translation, appended in the output folder (the report reads it back).
HISTORY_FILE = "console_history.jsonl"
#: A scratch run's untrained model (the "before" side in the console and the report).
INITIAL_MODEL = "initial_model"


def check_writable(folder: Path) -> None:
    """Fail early, with the fix, when outputs cannot be written -- without creating anything.

    The folder may not exist yet (it is made when the run starts, after every other
    check), so the nearest existing ancestor must be a writable folder.
    """
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    problem = None
    if not existing.is_dir():
        problem = f"'{existing}' is a file, not a folder"
    elif not os.access(existing, os.W_OK | os.X_OK):
        problem = f"no write permission on '{existing}'"
    if problem:
        raise WorkbenchError(
            f"output dir '{folder}' is not writable ({problem}); "
            "pass a writable folder with --output-dir"
        )


def new_run_dir(output_root: Path, preset: str) -> Path:
    """A fresh folder per run, so no run ever overwrites another's outputs."""
    runs = output_root / RUNS_FOLDER
    runs.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1000):
        candidate = runs / (f"{stamp}-{preset}" + (f"-{n}" if n else ""))
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise WorkbenchError(f"could not create a run folder under '{runs}'")


def saved_config(run_dir: Path, preset: str) -> RunConfig:
    """The configuration a run was started with (its config.json), to resume it as it was.

    ``preset`` is used when the file names none.
    """
    saved = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    if "test_fraction" not in saved:
        # Its checkpoints trained on pairs that today's split holds out as the test set,
        # and a scratch model's vocabulary would be rebuilt from another training split.
        raise WorkbenchError(
            f"run '{run_dir.name}' was started by an earlier workbench without a test "
            "set, so it cannot be resumed without training on today's test pairs; start "
            "a new run without --resume"
        )
    saved.pop("precision", None)  # recorded, not a setting
    return build_config(saved.pop("preset", preset), overrides=saved)


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
