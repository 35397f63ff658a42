"""A sweep's worker: claims points from the study one at a time (``claims``: the package's
"every point once"), trains each as a normal run while it holds the trial's lease (one
writer per run folder, ``lease``), and tells the study how it ended."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.core.config.build import build_config
from workbench.core.events import Event
from workbench.core.experiments.sweep.claims import Claim, StudyClaims
from workbench.core.experiments.sweep.coordination import open_study, study_lock
from workbench.core.experiments.sweep.events import SweepEvent, SweepNote, TrialEnded, TrialStarted
from workbench.core.experiments.sweep.optuna_study import (
    SweepResult,
    best_row,
    import_optuna,
    rows_of,
    trial_params,
    trial_status,
)
from workbench.core.experiments.sweep.plan import GRACE_FACTOR, SweepPlan, TrialFailed, trial_value
from workbench.core.experiments.sweep.space import point_key
from workbench.core.live.writer import RunFolderBusy
from workbench.core.run_folder.layout import OutputFolder, RunFolder
from workbench.core.run_folder.output_folder import new_run_dir
from workbench.core.run_folder.summary_file import read_summary
from workbench.core.train.checkpoints import publish_model
from workbench.errors import WorkbenchError, without_passwords


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
        with study_lock(plan.storage_url):
            self.storage, self.study = open_study(self.optuna, plan)
        self.claims = StudyClaims(plan, self.optuna, self.storage, self.study, on_event)

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
        done = sum(trial_status(t) in ("finished", "failed") for t in self.claims.trials())
        return done, self.plan.trials

    def _best(self) -> tuple[int, float] | None:
        best = best_row(rows_of(self.claims.trials()))
        return (best.number, best.value) if best and best.value is not None else None

    def run_trial(self, claim: Claim) -> str:
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

    def _tell(self, claim: Claim, value: float | None, outcome: str, reason: str | None) -> None:
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
            claim = self.claims.claim()
            if claim == "done":
                break
            if claim == "wait":
                self.stop.wait(self.plan.heartbeat)
                continue
            assert isinstance(claim, Claim)
            if self.run_trial(claim) == "stopped":
                status = "stopped"
                break
        return self.result(status)

    def result(self, status: str) -> SweepResult:
        """The study's trials, its best one, and the best model published (when done)."""
        rows = rows_of(self.claims.trials())
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


def run_sweep(
    plan: SweepPlan,
    on_event: Callable[[SweepEvent | Event], None] | None = None,
    stop: threading.Event | None = None,
) -> SweepResult:
    """Run one worker of ``plan`` to the end (or to ``stop``); see the module docstring."""
    worker = SweepWorker(plan, on_event or (lambda event: None), stop or threading.Event())
    return worker.run()
