"""The run folders of an output folder: a new one per run, so that no run ever overwrites
another's outputs; all of them, newest first; the newest finished one; and the one a saved
model names, found again from wherever the user stands."""

from __future__ import annotations

import time
from pathlib import Path

from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.layout import OutputFolder
from workbench.core.run_folder.summary_file import read_summary
from workbench.errors import WorkbenchError


def new_run_dir(output_root: Path, preset: str) -> Path:
    """A fresh folder per run, named by its start time and preset."""
    runs = OutputFolder(output_root).runs
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


def run_folders(output_root: Path) -> list[Path]:
    """Run folders under ``output_root``, newest first (their names start with a timestamp)."""
    runs = OutputFolder(output_root).runs
    if not runs.is_dir():
        return []
    return sorted((p for p in runs.iterdir() if p.is_dir()), reverse=True)


def latest_finished_run(output_root: Path) -> tuple[Path, RunSummary] | None:
    """The newest run folder whose summary says it finished."""
    for run in run_folders(output_root):
        summary = read_summary(run)
        if summary is not None and summary.status == "finished":
            return run, summary
    return None


def run_dir_of(model_dir: str | Path, recorded: str | None) -> Path | None:
    """The run folder a saved model's ``workbench.json`` names (``recorded``), if it is
    still there.

    A run writes ``run_dir`` as it was given, often relative to where training started
    (``translation_output/runs/...``); that is tried from here and from each folder above
    the model, so a study or the report finds it from any working directory.
    """
    if not recorded:
        return None
    path = Path(recorded).expanduser()
    candidates = (
        [path]
        if path.is_absolute()
        else [path, *(parent / path for parent in Path(model_dir).expanduser().resolve().parents)]
    )
    return next((folder for folder in candidates if folder.is_dir()), None)
