"""A sweep's plan and its objective: what varies, how many trials, where the study
lives, and validation BLEU as the one number trials are ranked by."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from workbench.core.config.run_config import RunConfig
from workbench.core.experiments.sweep.space import SweepSpace
from workbench.core.records.scores import SetScores, finite_or_none
from workbench.core.records.summary import RunSummary
from workbench.errors import WorkbenchError

#: Where the default study databases go, under the output folder.
SWEEPS_FOLDER = "sweeps"
#: Seconds between a running trial's heartbeats; a trial silent for GRACE_FACTOR times
#: this is taken as killed. 30 s x 4 = 2 min: long enough that a busy machine (a CPU
#: training step can hold a core for seconds) never looks dead.
DEFAULT_HEARTBEAT = 30
GRACE_FACTOR = 4
#: Trials a search runs when --trials is not given.
DEFAULT_TRIALS = 8


# --------------------------------------------------------------------------- the objective


class TrialFailed(Exception):
    """A trial that ran but has no objective value; the message says why."""


def validation_bleu(validation: SetScores | None) -> float:
    """The objective: BLEU after fine-tuning on the **validation** set.

    It is given the validation scores alone, never the summary, so the test set cannot
    leak into the choice of a recipe even by mistake.
    """
    value = finite_or_none(validation.bleu_after) if validation is not None else None
    if value is None:
        raise TrialFailed(
            "the run has no validation BLEU (summary.json has no validation "
            "block with a finite bleu_after)"
        )
    return value


def trial_value(summary: RunSummary) -> float:
    """A finished run's objective: :func:`validation_bleu` of its validation block only."""
    return validation_bleu(summary.validation)


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class SweepPlan:
    """One sweep: the base recipe, what varies, where the study lives, how many trials."""

    name: str
    base: RunConfig
    space: SweepSpace
    storage_url: str
    trials: int  # a grid: its size; a search: --trials
    heartbeat: int = DEFAULT_HEARTBEAT

    @property
    def output_root(self) -> Path:
        """Where the trials' run folders (and the default study database) go."""
        return Path(self.base.output_dir).expanduser()


def default_storage(output_root: Path, name: str) -> str:
    """``sqlite:///<output_dir>/sweeps/<name>.db`` (absolute, so any working folder works)."""
    return f"sqlite:///{(output_root / SWEEPS_FOLDER / f'{name}.db').resolve()}"


def make_plan(
    base: RunConfig,
    space: SweepSpace,
    name: str,
    storage_url: str | None = None,
    trials: int | None = None,
    heartbeat: int = DEFAULT_HEARTBEAT,
) -> SweepPlan:
    """Check the counts and fill in the defaults; one line with the fix when one is off."""
    if space.mode == "grid" and trials is not None:
        raise WorkbenchError(
            f"--trials is for --search; a grid runs each of its "
            f"{len(space.grid_points())} points once"
        )
    count = (
        len(space.grid_points())
        if space.mode == "grid"
        else DEFAULT_TRIALS
        if trials is None
        else trials
    )
    if count < 1:
        raise WorkbenchError(f"--trials must be 1 or more, got {trials}")
    if heartbeat < 1:
        raise WorkbenchError(f"--heartbeat must be 1 second or more, got {heartbeat}")
    if base.select_on != "bleu":
        raise WorkbenchError(
            f"a sweep ranks its trials by validation BLEU, so its trials choose their best "
            f"epoch by it too; leave --select-on {base.select_on} out (--comet still scores "
            "each trial)"
        )
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise WorkbenchError(
            f"--name '{name}' must be letters, digits, '.', '_' or '-' "
            "(it names the study and its file), e.g. demo-lr"
        )
    url = storage_url or default_storage(Path(base.output_dir).expanduser(), name)
    return SweepPlan(name, base, space, url, count, heartbeat)
