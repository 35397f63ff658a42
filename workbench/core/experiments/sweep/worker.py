"""A sweep's worker: claims points from the study one at a time (see the package's
"every point once"), trains each as a normal run while it holds the trial's lease (one
writer per run folder, ``lease``), and tells the study how it ended."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.config.build import build_config
from workbench.core.events import Event
from workbench.core.experiments.sweep.coordination import open_study, study_lock
from workbench.core.experiments.sweep.events import SweepEvent, SweepNote, TrialEnded, TrialStarted
from workbench.core.experiments.sweep.lease import TrialLease
from workbench.core.experiments.sweep.optuna_study import (
    CUT_SHORT,
    SweepResult,
    best_row,
    import_optuna,
    is_settled,
    rows_of,
    trial_attrs,
    trial_params,
    trial_status,
)
from workbench.core.experiments.sweep.plan import GRACE_FACTOR, SweepPlan, TrialFailed, trial_value
from workbench.core.experiments.sweep.space import point_key, point_text
from workbench.core.live.writer import RunFolderBusy
from workbench.core.run_folder.layout import OutputFolder, RunFolder
from workbench.core.run_folder.output_folder import new_run_dir
from workbench.core.run_folder.summary_file import is_finished, read_summary
from workbench.core.train.checkpoints import last_complete_checkpoint, publish_model
from workbench.errors import WorkbenchError, without_passwords


@dataclass
class _Claim:
    trial: Any  # optuna.Trial
    trial_id: int
    lease: TrialLease
    resume_dir: Path | None


class SweepWorker:
    """One worker of a sweep: claims points from the study and trains them in turn."""

    def __init__(
        self, plan: SweepPlan, on_event: Callable[[SweepEvent | Event], None], stop: threading.Event
    ) -> None:
        from workbench.core.train.preflight import check_writable  # its checks import data/

        self.plan, self.on_event, self.stop = plan, on_event, stop
        check_writable(plan.output_root)  # before the study's folder is made in it
        self.optuna = import_optuna()
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        self.waiting_for: set[int] = set()
        with study_lock(plan.storage_url):
            self.storage, self.study = open_study(self.optuna, plan)
        self.study_id = self.storage.get_study_id_from_name(plan.name)

    # ---- claiming a point

    def _trials(self) -> list[Any]:
        return self.study.get_trials(deepcopy=False)

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
            if run_dir and _resumable(Path(run_dir)):
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
        for other in self._trials():
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

    def _claim(self) -> _Claim | str:
        """A trial to run, or ``"wait"`` (others are running the rest) or ``"done"``."""
        with study_lock(self.plan.storage_url):
            self.optuna.storages.fail_stale_trials(self.study)
            trials = self._trials()
            self._enqueue_missing(trials)
            popped = self._pop()
            if popped is not None:
                frozen, trial_id = popped
                trial = self.optuna.trial.Trial(self.study, trial_id)
                resume = trial_attrs(frozen).resume
                resume_dir = Path(resume) if resume and _resumable(Path(resume)) else None
                if resume_dir is not None:  # the folder's lease passes to this trial, here
                    self.storage.set_trial_user_attr(trial_id, "run_dir", str(resume_dir))
                return _Claim(trial, trial_id, self._lease(trial_id), resume_dir)
            trials = self._trials()
            taken = [t for t in trials if is_settled(t)]
            if self.plan.space.mode == "search" and len(taken) < self.plan.trials:
                trial = self.study.ask()
                trial_id = self.storage.get_trial_id_from_study_id_trial_number(
                    self.study_id, trial.number
                )
                return _Claim(trial, trial_id, self._lease(trial_id), None)
            running = [t for t in trials if trial_status(t) == "running"]
        if running:
            self._say_waiting(running)
            return "wait"
        return "done"

    def _lease(self, trial_id: int) -> TrialLease:
        grace = self.plan.heartbeat * GRACE_FACTOR
        return TrialLease(self.storage, trial_id, self.plan.heartbeat, grace)

    def _say_waiting(self, running: list[Any]) -> None:
        numbers = {t.number for t in running}
        if numbers - self.waiting_for:
            grace = self.plan.heartbeat * GRACE_FACTOR
            listed = ", ".join(f"#{t.number} ({point_text(trial_params(t))})" for t in running)
            self.on_event(
                SweepNote(
                    f"waiting for trial {listed}, running in another worker (a worker that "
                    f"was killed is noticed {grace} s after its last heartbeat, and its trial "
                    "taken up here)"
                )
            )
        self.waiting_for = numbers

    # ---- running a point

    def _suggest(self, trial: Any) -> dict[str, Any]:
        """The trial's settings: the enqueued point, or TPE's draw for a new search trial."""
        optuna = self.optuna
        # Seeded per trial number: two workers would otherwise draw the same first points.
        self.study.sampler = optuna.samplers.TPESampler(
            seed=self.plan.base.seed + trial.number, constant_liar=True
        )
        params: dict[str, Any] = {}
        for d in self.plan.space.dimensions:
            if d.kind in ("grid", "choice"):
                params[d.name] = trial.suggest_categorical(d.name, list(d.values))
            elif d.kind == "int":
                params[d.name] = trial.suggest_int(d.name, *d.values)
            else:
                params[d.name] = trial.suggest_float(d.name, *d.values, log=d.kind == "loguniform")
        trial.set_user_attr("point", point_key(params))
        return params

    def _counts(self) -> tuple[int, int]:
        """(points settled, points in all) for the ``(k/N)`` of the progress lines."""
        done = sum(trial_status(t) in ("finished", "failed") for t in self._trials())
        return done, self.plan.trials

    def _best(self) -> tuple[int, float] | None:
        best = best_row(rows_of(self._trials()))
        return (best.number, best.value) if best and best.value is not None else None

    def run_trial(self, claim: _Claim) -> str:
        """Train one point; tell the study how it ended. Returns the outcome."""
        from workbench.core.train.run_training import LOST, run_training  # torch: imported here

        trial = claim.trial
        run_dir: Path | None = None
        try:
            trial.set_user_attr("worker", self.worker)
            params = self._suggest(trial)
            config = build_config(
                self.plan.base.preset, overrides={**self.plan.base.to_dict(), **params}
            )
            if self.stop.is_set():  # Ctrl-C just after the claim: no minutes of set-up
                self._tell(claim, None, "stopped", "stopped before it started")
                return "stopped"
            # Absolute: a rerun from another working folder finds the folder again.
            run_dir = (
                claim.resume_dir or new_run_dir(self.plan.output_root, config.preset)
            ).resolve()
            trial.set_user_attr("run_dir", str(run_dir))
            done, total = self._counts()
            self.on_event(
                TrialStarted(
                    trial.number,
                    done + 1,
                    total,
                    params,
                    str(run_dir),
                    claim.resume_dir is not None,
                )
            )
            # Not published per trial: <output>/best_model becomes the best trial's model
            # at the end, under the study's lock (see result()).
            result = run_training(
                config, self.on_event, self.stop, run_dir=run_dir, publish=False, lease=claim.lease
            )
            outcome, value, reason = "stopped", None, None
            if result.status == LOST:
                step = result.summary.global_step
                at = f" at step {step}" if step is not None else ""
                outcome = "lost"
                reason = f"{claim.lease.lost}; this worker stopped{at} and wrote nothing more"
            elif result.status == "finished":
                try:
                    value, outcome = trial_value(result.summary), "finished"
                except TrialFailed as err:
                    outcome, reason = "failed", str(err)
            elif result.status == "failed":
                outcome, reason = "failed", result.summary.error or "the run failed"
        except KeyboardInterrupt:
            self._tell(claim, None, "interrupted", "interrupted (Ctrl-C twice)")
            raise
        except RunFolderBusy as err:  # its earlier worker still writes it: the point waits
            outcome, value, reason = "lost", None, str(err)
        except WorkbenchError as err:  # the user's to fix, for every point: stop here
            self._tell(claim, None, "error", str(err))
            _remove_if_empty(run_dir)  # refused before the run began: nothing to keep
            raise
        except Exception as err:  # this point's trouble: the next one may train
            text = without_passwords(f"{type(err).__name__}: {err}")  # a driver's message
            outcome, value, reason = "failed", None, text
            _remove_if_empty(run_dir)
        self._tell(claim, value, outcome, reason)
        done, total = self._counts()
        self.on_event(
            TrialEnded(
                trial.number,
                done + (outcome == "stopped"),
                total,
                trial_params(self.storage.get_trial(claim.trial_id)),
                str(run_dir or ""),
                outcome,
                value,
                reason,
                self._best(),
            )
        )
        return outcome

    def _tell(self, claim: _Claim, value: float | None, outcome: str, reason: str | None) -> None:
        """Record the outcome; the study keeps the first word on a trial."""
        claim.lease.stop()
        trial, states = claim.trial, self.optuna.trial.TrialState
        with contextlib.suppress(Exception):
            trial.set_user_attr("outcome", outcome)
            if reason:
                trial.set_user_attr("reason", reason)
        told = self.study.tell(
            trial,
            value if outcome == "finished" else None,
            state=None if outcome == "finished" else states.FAIL,
            skip_if_finished=True,
        )
        if outcome == "finished" and told.state != states.COMPLETE:
            self.on_event(
                SweepNote(
                    f"trial #{trial.number} was taken for dead by another worker (no heartbeat "
                    f"for {self.plan.heartbeat * GRACE_FACTOR} s) while it ran; its run folder "
                    "keeps the result, the study does not",
                    "warning",
                )
            )

    # ---- the loop

    def run(self) -> SweepResult:
        """Claim and train points until every one is settled or ``stop`` is set."""
        status = "finished"
        while True:
            if self.stop.is_set():
                status = "stopped"
                break
            claim = self._claim()
            if claim == "done":
                break
            if claim == "wait":
                self.stop.wait(self.plan.heartbeat)
                continue
            assert isinstance(claim, _Claim)
            if self.run_trial(claim) == "stopped":
                status = "stopped"
                break
        return self.result(status)

    def result(self, status: str) -> SweepResult:
        """The study's trials, its best one, and the best model published (when done)."""
        rows = rows_of(self._trials())
        best = best_row(rows)
        published = None
        if status == "finished" and best is not None and best.run_dir:
            summary = read_summary(Path(best.run_dir))
            model = summary.own_model() if summary else None
            if model:
                published_dir = OutputFolder(self.plan.output_root).best_model
                with study_lock(self.plan.storage_url):  # two workers finishing at once
                    publish_model(Path(model), published_dir)
                published = str(published_dir)
        with contextlib.suppress(Exception):
            self.storage.remove_session()
        return SweepResult(status, without_passwords(self.plan.storage_url), rows, best, published)


def _remove_if_empty(folder: Path | None) -> None:
    """Remove a run folder a trial made when the run never wrote into it but its lines
    (the sweep's own line says why the trial ended)."""
    if folder is not None:
        with contextlib.suppress(OSError):
            log = RunFolder(folder).log
            if all(path == log for path in folder.iterdir()):
                log.unlink(missing_ok=True)
                folder.rmdir()


def _resumable(run_dir: Path) -> bool:
    """A cut-short run folder a trial can continue: not finished, a complete checkpoint."""
    return (
        run_dir.is_dir()
        and not is_finished(run_dir)
        and last_complete_checkpoint(run_dir) is not None
    )


def run_sweep(
    plan: SweepPlan,
    on_event: Callable[[SweepEvent | Event], None] | None = None,
    stop: threading.Event | None = None,
) -> SweepResult:
    """Run one worker of ``plan`` to the end (or to ``stop``); see the module docstring."""
    worker = SweepWorker(plan, on_event or (lambda event: None), stop or threading.Event())
    return worker.run()
