"""A run's ``config.json``, written when the run starts and read back typed: to resume
the run as it was, to show the settings it started with, and to compare runs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.atomic import write_json
from workbench.core.config.build import build_config
from workbench.core.config.run_config import RunConfig
from workbench.core.records.files import read_json_dict
from workbench.core.records.run_records import CleaningRecord, Precision
from workbench.core.records.typed import decode
from workbench.core.run_folder.layout import RunFolder
from workbench.errors import WorkbenchError

#: What config.json's settings may hold: a RunConfig's fields and the preset's name.
SETTING_NAMES = ("preset", *(f.name for f in dataclasses.fields(RunConfig) if f.name != "preset"))


@dataclass(frozen=True)
class SavedConfig:
    """A run's ``config.json``: the settings it was started with, and the two records the
    run wrote beside them (its precision, resolved on the device that started it, and what
    cleaning dropped). Only :attr:`settings` are settings: comparing runs, resuming one or
    showing what it changed never treats a record as something the user set."""

    #: RunConfig.to_dict()'s form, the preset's name included: a mapping by setting name,
    #: since an older or newer run records another set of settings.
    settings: dict[str, Any]
    precision: Precision | None = None
    cleaning: CleaningRecord | None = None

    @property
    def preset(self) -> str | None:
        """The preset the run started from, as recorded."""
        preset = self.value("preset")
        return str(preset) if preset is not None else None

    def value(self, name: str, missing: Any = None) -> Any:
        """The setting ``name`` as the run recorded it, or ``missing`` where it recorded none."""
        return self.settings.get(name, missing)

    def config(self, preset: str) -> RunConfig:
        """The settings as a :class:`RunConfig`, checked as a new run's are (``preset``
        where the file names none); a :class:`WorkbenchError` says what does not build."""
        overrides = {k: v for k, v in self.settings.items() if k != "preset"}
        return build_config(self.preset or preset, overrides=overrides)


def write_saved_config(run_dir: Path, saved: SavedConfig) -> None:
    """Write ``config.json`` (atomically): the settings, then the records beside them."""
    record = dict(saved.settings)
    if saved.precision is not None:
        record["precision"] = saved.precision.to_dict()
    if saved.cleaning is not None:
        record["cleaning"] = dataclasses.asdict(saved.cleaning)
    write_json(RunFolder(run_dir).config, record)


def read_saved_config(run_dir: Path, notes: list[str] | None = None) -> SavedConfig | None:
    """A run's config.json, or None when it is missing, torn or not a JSON object.

    What does not read is said in ``notes``: a key that is no setting (a newer or
    hand-edited file) is left out of the settings; a setting the file lacks (an older
    run) takes the preset's value when the settings are built; a record beside the
    settings that does not read is read as missing.
    """
    said = notes if notes is not None else []
    path = RunFolder(run_dir).config
    data = read_json_dict(path)
    if data is None:
        said.append(f"{path.name}: missing or unreadable")
        return None
    settings = {}
    for key, value in data.items():
        if key in ("precision", "cleaning"):
            continue
        if key in SETTING_NAMES:
            settings[key] = value
        else:
            said.append(f"{path.name}: unknown setting {key!r} ignored")
    said += [
        f"{path.name}: no {name!r}; the preset's value is used"
        for name in SETTING_NAMES
        if name not in data
    ]
    precision = cleaning = None
    if "precision" in data:
        precision = decode(Precision, data["precision"], said, f"{path.name}.precision")
    if "cleaning" in data:
        cleaning = decode(CleaningRecord, data["cleaning"], said, f"{path.name}.cleaning")
    return SavedConfig(settings, precision, cleaning)


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
