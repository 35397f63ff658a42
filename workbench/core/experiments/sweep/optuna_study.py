"""Reading an Optuna study: Optuna itself (imported only here, on demand), each trial's
status and settings, the rows a sweep lists and the best of them."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from workbench.core import DISTRIBUTION
from workbench.core.records.typed import decode
from workbench.errors import WorkbenchError

#: How a trial was cut short: Ctrl-C (``stopped`` at a step with a checkpoint), Ctrl-C
#: twice (``interrupted``), a mistake the user fixes before the rerun (``error``), its
#: worker died (``killed``: failed by the heartbeat check), or its worker lost the run
#: folder's lease while it ran (``lost``: paused, or too slow to beat in time). Their
#: points are run again; a trial that ``failed`` (a NaN loss, no score) is final.
CUT_SHORT = ("stopped", "interrupted", "error", "killed", "lost")

OPTUNA_MISSING = f"workbench sweep needs Optuna: pip install '{DISTRIBUTION}[sweep]'"


def import_optuna() -> Any:
    """Optuna, quiet (its INFO lines and experimental-feature warnings are not the user's
    business), or one line saying how to install it."""
    try:
        import optuna
    except ImportError:
        raise WorkbenchError(OPTUNA_MISSING) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    # Workers claim trials themselves (see "every point once") and beat the heart for them.
    warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used")
    return optuna


@dataclass(frozen=True)
class TrialRow:
    """A trial as the end of a sweep lists it."""

    number: int
    status: str  # finished, failed, stopped, killed, running, waiting
    params: dict[str, Any]
    value: float | None
    run_dir: str | None
    reason: str | None


@dataclass(frozen=True)
class SweepResult:
    """What a worker leaves: its status, every trial of the study, the best one."""

    status: str  # "finished" (every point settled) or "stopped"
    storage_url: str  # its password hidden: a result is there to be shown
    trials: list[TrialRow]
    best: TrialRow | None
    published: str | None  # where the best trial's model was copied


@dataclass(frozen=True)
class TrialAttrs:
    """What a sweep records on an Optuna trial (its user attributes), typed."""

    point: str | None = None  # the point's key: two trials of one point are one point
    run_dir: str | None = None  # the trial's run folder, once it has one
    resume: str | None = None  # the folder of a cut-short trial this one continues
    retry_of: int | None = None  # that trial's number
    worker: str | None = None  # host:pid of the worker that ran it
    outcome: str | None = None  # how it ended, when it ended itself
    reason: str | None = None  # why it failed


@dataclass(frozen=True)
class EnqueuedAttrs:
    """The one system attribute of Optuna's that a sweep reads: an enqueued trial's
    settings, before it runs."""

    fixed_params: dict[str, Any] | None = None


@dataclass(frozen=True)
class StudyAttrs:
    """What a sweep records on its study: the search space it was started with."""

    space: Any = None


def trial_attrs(trial: Any) -> TrialAttrs:
    """A trial's :class:`TrialAttrs` (an attribute of the wrong type read as missing)."""
    return decode(TrialAttrs, trial.user_attrs) or TrialAttrs()


def trial_params(trial: Any) -> dict[str, Any]:
    """A trial's settings: suggested, or fixed when it was enqueued and not yet run (Optuna
    keeps those in its own ``fixed_params`` system attribute)."""
    fixed = decode(EnqueuedAttrs, trial.system_attrs) or EnqueuedAttrs()
    return dict(trial.params or fixed.fixed_params or {})


def trial_status(trial: Any) -> str:
    """finished / failed / running / waiting / duplicate, or how it was cut short."""
    state = trial.state.name
    if state == "COMPLETE":
        return "finished"
    if state in ("RUNNING", "WAITING"):
        return state.lower()
    # A FAIL with no outcome was failed by a heartbeat check: its worker died.
    return trial_attrs(trial).outcome or "killed"


def is_settled(trial: Any) -> bool:
    """A point counts as done (or taken) once a trial of it is in one of these states."""
    return trial_status(trial) in ("finished", "failed", "running", "waiting")


def rows_of(trials: list[Any]) -> list[TrialRow]:
    """The study's trials as rows, duplicates (never trained) left out."""
    rows = []
    for t in trials:
        status = trial_status(t)
        if status != "duplicate":
            attrs = trial_attrs(t)
            value = t.value if t.state.name == "COMPLETE" else None
            rows.append(
                TrialRow(t.number, status, trial_params(t), value, attrs.run_dir, attrs.reason)
            )
    return rows


def best_row(rows: list[TrialRow]) -> TrialRow | None:
    """The finished trial with the highest validation BLEU (the first of equal ones)."""
    done = [r for r in rows if r.status == "finished" and r.value is not None]
    return max(done, key=lambda r: r.value or 0.0) if done else None


# --------------------------------------------------------------------------- the worker


#: Runs a sweep's closing comparison shows at most (the best and the next ones).
MOST_COMPARED = 6


def runs_to_compare(result: SweepResult, most: int = MOST_COMPARED) -> tuple[list[str], int]:
    """The finished trials' run folders, best validation BLEU first (each folder once), at
    most ``most`` of them, and how many were left out: the best is run A of the closing
    ``compare``, so every paired test is "the best against this one"."""
    finished = sorted(
        (
            row
            for row in result.trials
            if row.status == "finished" and row.run_dir and row.value is not None
        ),
        key=lambda row: -float(row.value or 0.0),
    )
    folders = list(dict.fromkeys(str(row.run_dir) for row in finished))
    return folders[:most], max(0, len(folders) - most)
