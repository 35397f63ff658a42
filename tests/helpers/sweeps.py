"""A sweep's results read back: a trial's summary and the SQLite study's trials."""

from __future__ import annotations

from pathlib import Path

from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.summary_file import read_summary


def summary_of(run_dir: str | Path | None) -> RunSummary:
    """The summary.json in ``run_dir``; a failed assertion where there is none."""
    assert run_dir is not None
    summary = read_summary(Path(run_dir))
    assert summary is not None, f"no summary.json in {run_dir}"
    return summary


def study_trials(output: Path) -> tuple[str, list]:
    """The one study in ``output``'s SQLite file: its name and its trials."""
    import optuna

    (db,) = (output / "sweeps").glob("*.db")
    storage = f"sqlite:///{db}"
    (name,) = optuna.get_all_study_names(storage)
    return name, optuna.load_study(study_name=name, storage=storage).get_trials()
