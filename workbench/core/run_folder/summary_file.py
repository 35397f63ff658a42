"""A run's ``summary.json``: its :class:`~workbench.core.records.summary.RunSummary`,
written when the run ends (and when it stops or fails) and read back by every front end."""

from __future__ import annotations

from pathlib import Path

from workbench.core.atomic import write_json
from workbench.core.records.files import read_json_dict
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.layout import RunFolder


def write_summary(run_dir: Path, summary: RunSummary) -> None:
    """Write ``run_dir/summary.json`` atomically: a reader sees the old one or the new one."""
    write_json(RunFolder(run_dir).summary, summary.to_dict())


def read_summary(run_dir: Path, notes: list[str] | None = None) -> RunSummary | None:
    """A run's summary.json, or None when missing, unreadable or not a JSON object; what
    was read as missing or ignored is said in ``notes``."""
    path = RunFolder(run_dir).summary
    data = read_json_dict(path)
    return RunSummary.from_dict(data, notes, path.name) if data is not None else None


def is_finished(run_dir: Path) -> bool:
    """True when the run's summary says it finished."""
    summary = read_summary(run_dir)
    return summary is not None and summary.status == "finished"
