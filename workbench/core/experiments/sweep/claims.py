"""Claiming a sweep's points, one at a time, so that every point runs once (the package's
"every point once").

Under the study's lock a worker fails the trials whose worker stopped sending heartbeats,
enqueues each point with no trial done or under way (grid points never tried, and the
points of trials cut short, which carry the run folder to continue), then takes a WAITING
trial: setting it RUNNING succeeds for one worker only, and a copy of a point that two
workers enqueued at once is marked a duplicate and never trained. With nothing waiting, a
search asks Optuna for a new trial until it has its number; otherwise the worker waits
for the trials running elsewhere, or is done. Training a claimed point is
:mod:`~workbench.core.experiments.sweep.worker`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.experiments.sweep.coordination import study_lock
from workbench.core.experiments.sweep.events import SweepNote
from workbench.core.experiments.sweep.lease import TrialLease
from workbench.core.experiments.sweep.optuna_study import (
    CUT_SHORT,
    is_settled,
    trial_attrs,
    trial_params,
    trial_status,
)
from workbench.core.experiments.sweep.plan import GRACE_FACTOR, SweepPlan
from workbench.core.experiments.sweep.space import point_key, point_text
from workbench.core.run_folder.summary_file import is_finished
from workbench.core.train.checkpoints import last_complete_checkpoint


@dataclass
class Claim:
    """A trial this worker holds: the trial, its id, its lease, and the run folder it
    continues (None: a new one)."""

    trial: Any  # optuna.Trial
    trial_id: int
    lease: TrialLease
    resume_dir: Path | None


class StudyClaims:
    """One worker's side of the claim protocol over a study it opened."""

    def __init__(
        self,
        plan: SweepPlan,
        optuna: Any,
        storage: Any,
        study: Any,
        on_note: Callable[[SweepNote], None],
    ) -> None:
        self.plan, self.optuna, self.storage, self.study = plan, optuna, storage, study
        self.on_note = on_note
        self.study_id = storage.get_study_id_from_name(plan.name)
        #: The trials running elsewhere that this worker last said it waits for.
        self.waiting_for: set[int] = set()

    def trials(self) -> list[Any]:
        """The study's trials as they are now."""
        return self.study.get_trials(deepcopy=False)

    def claim(self) -> Claim | str:
        """A trial to run, or ``"wait"`` (others are running the rest) or ``"done"``."""
        with study_lock(self.plan.storage_url):
            self.optuna.storages.fail_stale_trials(self.study)
            trials = self.trials()
            self._enqueue_missing(trials)
            popped = self._pop()
            if popped is not None:
                frozen, trial_id = popped
                trial = self.optuna.trial.Trial(self.study, trial_id)
                resume = trial_attrs(frozen).resume
                resume_dir = Path(resume) if resume and resumable(Path(resume)) else None
                if resume_dir is not None:  # the folder's lease passes to this trial, here
                    self.storage.set_trial_user_attr(trial_id, "run_dir", str(resume_dir))
                return Claim(trial, trial_id, self._lease(trial_id), resume_dir)
            trials = self.trials()
            taken = [t for t in trials if is_settled(t)]
            if self.plan.space.mode == "search" and len(taken) < self.plan.trials:
                trial = self.study.ask()
                trial_id = self.storage.get_trial_id_from_study_id_trial_number(
                    self.study_id, trial.number
                )
                return Claim(trial, trial_id, self._lease(trial_id), None)
            running = [t for t in trials if trial_status(t) == "running"]
        if running:
            self._say_waiting(running)
            return "wait"
        return "done"

    def _enqueue_missing(self, trials: list[Any]) -> None:
        """Enqueue each point with no trial done or under way: grid points never tried,
        and the points of trials cut short (which carry the run folder to continue)."""
        settled = {trial_attrs(t).point for t in trials if is_settled(t)}
        cut_short: dict[str, Any] = {}
        for t in trials:  # the latest cut-short trial of each point
            point = trial_attrs(t).point
            # A trial killed before its settings were drawn has no point: nothing to continue.
            if point is not None and trial_status(t) in CUT_SHORT and point not in settled:
                cut_short[point] = t
        for key, t in cut_short.items():
            attrs = {"point": key, "retry_of": t.number}
            run_dir = trial_attrs(t).run_dir
            if run_dir and resumable(Path(run_dir)):
                attrs["resume"] = run_dir
            self.study.enqueue_trial(trial_params(t), user_attrs=attrs)
            settled.add(key)
        if self.plan.space.mode == "grid":
            for params in self.plan.space.grid_points():
                if point_key(params) not in settled:
                    self.study.enqueue_trial(params, user_attrs={"point": point_key(params)})

    def _pop(self) -> tuple[Any, int] | None:
        """Take a WAITING trial (set it RUNNING, which succeeds for one worker only)."""
        states = (self.optuna.trial.TrialState.WAITING,)
        for frozen in self.storage.get_all_trials(self.study_id, deepcopy=False, states=states):
            trial_id = self.storage.get_trial_id_from_study_id_trial_number(
                self.study_id, frozen.number
            )
            try:
                taken = self.storage.set_trial_state_values(
                    trial_id, state=self.optuna.trial.TrialState.RUNNING
                )
            except self.optuna.exceptions.UpdateFinishedTrialError:
                continue
            if not taken:
                continue
            if self._is_duplicate(frozen):
                self.storage.set_trial_user_attr(trial_id, "outcome", "duplicate")
                self.storage.set_trial_state_values(
                    trial_id, state=self.optuna.trial.TrialState.FAIL
                )
                continue
            return frozen, trial_id
        return None

    def _is_duplicate(self, frozen: Any) -> bool:
        """Another trial of the same point is done, or under way with a lower number, or
        under way in the run folder this one would continue (which has one writer)."""
        mine = trial_attrs(frozen)
        for other in self.trials():
            if other.number == frozen.number:
                continue
            status, attrs = trial_status(other), trial_attrs(other)
            if mine.resume and status == "running" and attrs.run_dir == mine.resume:
                return True
            if attrs.point != mine.point:
                continue
            if status in ("finished", "failed") or (
                status in ("running", "waiting") and other.number < frozen.number
            ):
                return True
        return False

    def _lease(self, trial_id: int) -> TrialLease:
        grace = self.plan.heartbeat * GRACE_FACTOR
        return TrialLease(self.storage, trial_id, self.plan.heartbeat, grace)

    def _say_waiting(self, running: list[Any]) -> None:
        numbers = {t.number for t in running}
        if numbers - self.waiting_for:
            grace = self.plan.heartbeat * GRACE_FACTOR
            listed = ", ".join(f"#{t.number} ({point_text(trial_params(t))})" for t in running)
            self.on_note(
                SweepNote(
                    f"waiting for trial {listed}, running in another worker (a worker that "
                    f"was killed is noticed {grace} s after its last heartbeat, and its trial "
                    "taken up here)"
                )
            )
        self.waiting_for = numbers


def resumable(run_dir: Path) -> bool:
    """A cut-short run folder a trial can continue: not finished, a complete checkpoint."""
    return (
        run_dir.is_dir()
        and not is_finished(run_dir)
        and last_complete_checkpoint(run_dir) is not None
    )
