"""``workbench sweep``: many runs of one recipe, each a normal run folder, chosen by
validation BLEU, kept in an Optuna study so that a stopped sweep goes on where it stopped.

The study lives in a database (``<output_dir>/sweeps/<name>.db``, SQLite, by default; any
Optuna RDB URL with ``storage_url``). Several workers -- processes on one machine, or
machines sharing a database -- run one sweep together, which is Optuna's own distributed
mode. What this module adds on top of Optuna:

- **Every point once.** Grid points (and the points of trials cut short) are enqueued as
  WAITING trials and claimed one at a time, under the study's lock: a file lock beside a
  SQLite database, an advisory lock on PostgreSQL (``coordination``), which also keeps
  workers that start together on a fresh database from creating its tables at once. On
  other server databases Optuna's ``SELECT ... FOR UPDATE`` makes a claim atomic, and a
  point enqueued twice by two workers at once is run by the lower-numbered trial only.
- **One writer per run folder.** A worker writes into its trial's folder only while it
  holds the trial's lease (``lease``): a live worker taken for dead (paused, or its
  heartbeat late) stops at its next step and writes nothing more, so the worker that
  continues the folder is its only writer.
- **Cut short is not lost.** Ctrl-C stops the run at a step with a checkpoint and marks
  the trial ``stopped``; a worker killed outright stops sending heartbeats and its trial
  is failed as stale (Optuna's heartbeat). Either way the point is enqueued again, and
  the new trial continues the old run folder from its last complete checkpoint (or starts
  a new folder when there is none). A trial that *failed* (a NaN loss, no score, an error
  such as running out of memory) is final: its line in the table says why.
- **The objective is validation BLEU**, read from the run's summary by a function that is
  given the validation scores alone: the test set never takes part in a choice.

Optuna is imported inside functions only (``study.import_optuna``): ``workbench --help``
and the other commands do not need it installed.

The modules: ``plan`` (the plan and its objective), ``space`` (--grid/--search),
``events`` (a sweep's own events and their wording), ``optuna_study`` (reading Optuna's
trials), ``coordination`` (opening the study, its lock), ``lease`` (a trial's heartbeat
and its right to write), ``claims`` (the claim protocol) and ``worker`` (training the
points it claims).
"""

from __future__ import annotations

from workbench.core.experiments.sweep.events import (
    SweepEvent,
    SweepNote,
    TrialEnded,
    TrialStarted,
    sweep_lines,
)
from workbench.core.experiments.sweep.optuna_study import (
    MOST_COMPARED,
    OPTUNA_MISSING,
    SweepResult,
    TrialRow,
    import_optuna,
    runs_to_compare,
)
from workbench.core.experiments.sweep.plan import (
    DEFAULT_HEARTBEAT,
    DEFAULT_TRIALS,
    GRACE_FACTOR,
    SWEEPS_FOLDER,
    SweepPlan,
    TrialFailed,
    make_plan,
    trial_value,
    validation_bleu,
)
from workbench.core.experiments.sweep.worker import SweepWorker, run_sweep

__all__ = [
    "DEFAULT_HEARTBEAT",
    "DEFAULT_TRIALS",
    "GRACE_FACTOR",
    "MOST_COMPARED",
    "OPTUNA_MISSING",
    "SWEEPS_FOLDER",
    "SweepEvent",
    "SweepNote",
    "SweepPlan",
    "SweepResult",
    "SweepWorker",
    "TrialEnded",
    "TrialFailed",
    "TrialRow",
    "TrialStarted",
    "import_optuna",
    "make_plan",
    "run_sweep",
    "runs_to_compare",
    "sweep_lines",
    "trial_value",
    "validation_bleu",
]
