"""Run folders: where a run writes, and reading them back (resume finds unfinished runs, the
TUI and the report finished ones)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Protocol

from workbench.core.config.build import build_config
from workbench.core.config.run_config import DEFAULT_OUTPUT_DIR, RunConfig
from workbench.core.records.files import read_json_dict, read_jsonl
from workbench.core.records.scores import finite_or_none
from workbench.core.records.summary import SUMMARY_FILE, RunSummary, read_summary
from workbench.errors import WorkbenchError

RUNS_FOLDER = "runs"
#: The best model of a run (in its folder) and the published one (in the output folder).
BEST_MODEL = "best_model"
#: Every console translation, appended in the output folder (the report reads it back).
HISTORY_FILE = "console_history.jsonl"
#: A scratch run's untrained model (the "before" side in the console and the report).
INITIAL_MODEL = "initial_model"
#: A run's settings as it ran them (``--resume`` and the report read them back).
RUN_CONFIG_FILE = "config.json"
#: Every progress event as one JSON line, written as it happens.
METRICS_FILE = "metrics.jsonl"
#: The run's lines, as ``train --headless`` prints them, whoever started the run.
LOG_FILE = "train.log"
#: The Trainer's ``checkpoint-N`` folders.
CHECKPOINTS_FOLDER = "checkpoints"


class RunLease(Protocol):
    """The right to write into a run folder, which its holder can lose while it runs.

    A sweep's trial holds one: when its worker is taken for dead (paused, or its heartbeat
    late) another worker may continue the same folder, and two writers in one folder lose
    the data of both. Whoever loses the lease writes nothing more into the folder.
    """

    def held(self) -> bool:
        """Whether this process may still write into the run folder (once False, for good)."""
        ...


def holds(lease: RunLease | None) -> bool:
    """May the run write? Always, without a lease (``workbench train``, the TUI)."""
    return lease is None or lease.held()


class LeaseLost(Exception):
    """The run lost its lease (:class:`RunLease`) on ``run_dir``: it writes nothing more
    there. ``step`` is the training step it had reached (None before training)."""

    def __init__(self, run_dir: Path, step: int | None = None) -> None:
        super().__init__(f"the lease on {run_dir} was lost")
        self.run_dir = run_dir
        self.step = step


def check_lease(lease: RunLease | None, run_dir: Path, step: int | None = None) -> None:
    """Raise :class:`LeaseLost` unless the run may still write into ``run_dir``."""
    if not holds(lease):
        raise LeaseLost(run_dir, step)


def translations_file(split: str) -> str:
    """Every sentence of a held-out set with its before/after translation and BLEU."""
    return f"{split}_translations.jsonl"


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


def output_root_of(run_dir: Path) -> Path:
    """The output folder a run folder lives in (``<root>/runs/<name>``), else its parent."""
    return run_dir.parent.parent if run_dir.parent.name == RUNS_FOLDER else run_dir.parent


def output_dir_flag(output_root: Path | str) -> str:
    """`` --output-dir DIR`` for a command a line prints, or nothing for the default."""
    return "" if str(output_root) == DEFAULT_OUTPUT_DIR else f" --output-dir {output_root}"


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
    saved = json.loads((run_dir / RUN_CONFIG_FILE).read_text(encoding="utf-8"))
    # Precision.to_dict() of the machine that started the run: a record, not a setting (a
    # resumed run resolves its own, on the device it now runs on).
    saved.pop("precision", None)
    saved.pop("cleaning", None)  # what cleaning dropped: a record too
    return build_config(saved.pop("preset", preset), overrides=saved)


def started_settings(run_dir: Path, fallback: RunConfig) -> RunConfig:
    """The settings a run was started with (its config.json) to show them, or
    ``fallback`` where they do not read (a run too old, or killed before writing them)."""
    saved = read_json_dict(run_dir / RUN_CONFIG_FILE)
    if saved is None:
        return fallback
    for record in ("precision", "cleaning"):  # what the run recorded, not settings
        saved.pop(record, None)
    try:
        return build_config(str(saved.pop("preset", fallback.preset)), overrides=saved)
    except WorkbenchError:
        return fallback


def preset_defaults(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings of the preset a run's config.json names ({} for an unknown one), to
    show what the run changed."""
    try:
        return build_config(str(settings.get("preset"))).to_dict()
    except WorkbenchError:
        return {}


def run_dir_of(model_dir: str | Path, recorded: Any) -> Path | None:
    """The run folder a saved model's ``workbench.json`` names (``recorded``), if it is
    still there.

    A run writes ``run_dir`` as it was given, often relative to where training started
    (``translation_output/runs/...``); that is tried from here and from each folder above
    the model, so a study or the report finds it from any working directory.
    """
    if not recorded:
        return None
    path = Path(str(recorded)).expanduser()
    candidates = (
        [path]
        if path.is_absolute()
        else [path, *(parent / path for parent in Path(model_dir).expanduser().resolve().parents)]
    )
    return next((folder for folder in candidates if folder.is_dir()), None)


def run_folders(output_root: Path) -> list[Path]:
    """Run folders under ``output_root``, newest first (their names start with a timestamp)."""
    runs = output_root / RUNS_FOLDER
    if not runs.is_dir():
        return []
    return sorted((p for p in runs.iterdir() if p.is_dir()), reverse=True)


def is_finished(run_dir: Path) -> bool:
    """True when the run's summary says it finished."""
    summary = read_summary(run_dir)
    return summary is not None and summary.status == "finished"


def latest_finished_run(output_root: Path) -> tuple[Path, RunSummary] | None:
    """The newest run folder whose summary says it finished."""
    for run in run_folders(output_root):
        summary = read_summary(run)
        if summary is not None and summary.status == "finished":
            return run, summary
    return None


def finish_time(run_dir: Path, events: list[dict[str, Any]] | None = None) -> float | None:
    """When the run finished (and published its model), as a Unix time."""
    if events is None:
        events = read_jsonl(run_dir / METRICS_FILE)
    for e in reversed(events):
        if e.get("event") == "RunDone" and e.get("status") == "finished":
            return finite_or_none(e.get("time"))
    try:
        return (run_dir / SUMMARY_FILE).stat().st_mtime
    except OSError:
        return None
