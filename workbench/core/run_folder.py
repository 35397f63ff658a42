"""Run folders: where a run writes, and reading them back (resume finds unfinished runs, the
TUI and the report finished ones)."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.config.build import build_config
from workbench.core.config.run_config import RunConfig
from workbench.core.records.files import (
    read_json_dict,
    read_jsonl_counted,
    records_from_end,
)
from workbench.core.records.run_records import CleaningRecord, Precision, Sample
from workbench.core.records.scores import finite_or_none
from workbench.core.records.summary import RunSummary, read_summary
from workbench.core.records.typed import decode
from workbench.core.run_files import (
    BEST_MODEL,
    CHECKPOINTS_FOLDER,
    CONFIG_FILE,
    HISTORY_FILE,
    INITIAL_MODEL,
    LOG_FILE,
    METRICS_FILE,
    RUNS_FOLDER,
    RunFolder,
    translations_file,
)
from workbench.errors import WorkbenchError

__all__ = [
    "BEST_MODEL",
    "CHECKPOINTS_FOLDER",
    "HISTORY_FILE",
    "INITIAL_MODEL",
    "LOG_FILE",
    "METRICS_FILE",
    "RUNS_FOLDER",
    "RUN_CONFIG_FILE",
    "RunFolder",
    "SavedConfig",
    "translations_file",
]

#: config.json, by the name the run folder's readers have used.
RUN_CONFIG_FILE = CONFIG_FILE
#: What config.json's settings may hold: a RunConfig's fields and the preset's name.
SETTING_NAMES = ("preset", *(f.name for f in dataclasses.fields(RunConfig) if f.name != "preset"))


@dataclass(frozen=True)
class SavedConfig:
    """A run's ``config.json``: the settings it was started with, and the two records the
    run wrote beside them (its precision, resolved on the device that started it, and what
    cleaning dropped). Only :attr:`settings` are settings: comparing runs, resuming one or
    showing what it changed never treats a record as something the user set."""

    settings: dict[str, Any]  # RunConfig.to_dict()'s form, the preset's name included
    precision: Precision | None = None
    cleaning: CleaningRecord | None = None

    @property
    def preset(self) -> str | None:
        """The preset the run started from, as recorded."""
        preset = self.settings.get("preset")
        return str(preset) if preset is not None else None

    def value(self, name: str, missing: Any = None) -> Any:
        """The setting ``name`` as the run recorded it, or ``missing`` where it recorded none."""
        return self.settings.get(name, missing)

    def config(self, preset: str) -> RunConfig:
        """The settings as a :class:`RunConfig`, checked as a new run's are (``preset``
        where the file names none); a :class:`WorkbenchError` says what does not build."""
        overrides = {k: v for k, v in self.settings.items() if k != "preset"}
        return build_config(self.preset or preset, overrides=overrides)


def read_saved_config(run_dir: Path, notes: list[str] | None = None) -> SavedConfig | None:
    """A run's config.json, or None when it is missing, torn or not a JSON object.

    What does not read is said in ``notes``: a key that is no setting (a newer or
    hand-edited file) is left out of the settings; a setting the file lacks (an older
    run) takes the preset's value when the settings are built; a record beside the
    settings that does not read is read as missing.
    """
    said = notes if notes is not None else []
    data = read_json_dict(RunFolder(run_dir).config)
    if data is None:
        said.append(f"{CONFIG_FILE}: missing or unreadable")
        return None
    settings = {}
    for key, value in data.items():
        if key in ("precision", "cleaning"):
            continue
        if key in SETTING_NAMES:
            settings[key] = value
        else:
            said.append(f"{CONFIG_FILE}: unknown setting {key!r} ignored")
    said += [
        f"{CONFIG_FILE}: no {name!r}; the preset's value is used"
        for name in SETTING_NAMES
        if name not in data
    ]
    precision = cleaning = None
    if "precision" in data:
        precision = decode(Precision, data["precision"], said, f"{CONFIG_FILE}.precision")
    if "cleaning" in data:
        cleaning = decode(CleaningRecord, data["cleaning"], said, f"{CONFIG_FILE}.cleaning")
    return SavedConfig(settings, precision, cleaning)


def output_root_of(run_dir: Path) -> Path:
    """The output folder a run folder lives in (``<root>/runs/<name>``), else its parent."""
    return run_dir.parent.parent if run_dir.parent.name == RUNS_FOLDER else run_dir.parent


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
    """The configuration a run was started with (its config.json), to resume it as it was
    (its precision is resolved again, on the device it now runs on).

    ``preset`` is used when the file names none.
    """
    saved = read_saved_config(run_dir)
    if saved is None:
        raise WorkbenchError(
            f"{RunFolder(run_dir).config} is missing or unreadable, so the run cannot be "
            "resumed as it was; start a new run instead"
        )
    return saved.config(preset)


def started_settings(run_dir: Path, fallback: RunConfig) -> RunConfig:
    """The settings a run was started with (its config.json) to show them, or
    ``fallback`` where they do not read (a run too old, or killed before writing them)."""
    saved = read_saved_config(run_dir)
    if saved is None:
        return fallback
    try:
        return saved.config(fallback.preset)
    except WorkbenchError:
        return fallback


def preset_defaults(saved: SavedConfig) -> SavedConfig:
    """The settings of the preset a run's config.json names (none for an unknown one), in
    the same form, to show what the run changed."""
    try:
        return SavedConfig(build_config(str(saved.preset)).to_dict())
    except WorkbenchError:
        return SavedConfig({})


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


def finish_time(run_dir: Path) -> float | None:
    """When the run finished (and published its model), as a Unix time: the time its
    ``RunDone`` event was written, else its summary's (a run from before events were
    timed)."""
    folder = RunFolder(run_dir)
    for event in records_from_end(folder.metrics):
        if event.get("event") == "RunDone" and event.get("status") == "finished":
            return finite_or_none(event.get("time"))
    try:
        return folder.summary.stat().st_mtime
    except OSError:
        return None


def read_translations(
    run_dir: Path, split: str, notes: list[str] | None = None
) -> tuple[list[Sample], int]:
    """A held-out set's sentences with their before/after translations
    (``<split>_translations.jsonl``), and how many lines did not read (a torn last line of
    a killed writer, a hand-edited one); each such line is said in ``notes``."""
    path = RunFolder(run_dir).translations(split)
    records, torn = read_jsonl_counted(path)
    said = notes if notes is not None else []
    rows = []
    for number, record in enumerate(records, 1):
        sample = decode(Sample, record, said, f"{path.name} line {number}")
        if sample is not None:
            rows.append(sample)
    if torn:
        said.append(f"{path.name}: {torn} line(s) that are not JSON objects skipped")
    return rows, torn + len(records) - len(rows)
