"""``workbench sweep``: many runs of one recipe, each a normal run folder, chosen by
validation BLEU, kept in an Optuna study so that a stopped sweep goes on where it stopped.

The study lives in a database (``<output_dir>/sweeps/<name>.db``, SQLite, by default; any
Optuna RDB URL with ``storage_url``). Several workers -- processes on one machine, or
machines sharing a database -- run one sweep together, which is Optuna's own distributed
mode. What this module adds on top of Optuna:

- **Every point once.** Grid points (and the points of trials cut short) are enqueued as
  WAITING trials and claimed one at a time. On SQLite, Python's driver reads a trial's
  state and writes it in two transactions, so two processes can both claim the same
  WAITING trial; claims therefore go through a file lock beside the database. On a
  server database Optuna's ``SELECT ... FOR UPDATE`` makes a claim atomic, and a point
  enqueued twice by two workers at once is run by the lower-numbered trial only.
- **Cut short is not lost.** Ctrl-C stops the run at a step with a checkpoint and marks
  the trial ``stopped``; a worker killed outright stops sending heartbeats and its trial
  is failed as stale (Optuna's heartbeat). Either way the point is enqueued again, and
  the new trial continues the old run folder from its last complete checkpoint (or starts
  a new folder when there is none). A trial that *failed* (a NaN loss, no score, an error
  such as running out of memory) is final: its line in the table says why.
- **The objective is validation BLEU**, read from the run's summary by a function that is
  given the validation scores alone: the test set never takes part in a choice.

Optuna is imported inside functions only: ``workbench --help`` and the other commands do
not need it installed.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core import DISTRIBUTION
from workbench.core.config import RunConfig, build_config
from workbench.core.events import Event, EventSink
from workbench.core.experiments.sweep_space import SweepSpace, point_key, point_text
from workbench.core.run_folder import (
    BEST_MODEL,
    RunSummary,
    check_writable,
    is_finished,
    new_run_dir,
    read_summary,
)
from workbench.core.scores import SetScores, finite_or_none
from workbench.core.train.checkpoints import last_complete_checkpoint, publish_model
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

#: How a trial was cut short: Ctrl-C (``stopped`` at a step with a checkpoint), Ctrl-C
#: twice (``interrupted``), a mistake the user fixes before the rerun (``error``), or its
#: worker died (``killed``: failed by the heartbeat check). Their points are run again; a
#: trial that ``failed`` (a NaN loss, no score) is final.
CUT_SHORT = ("stopped", "interrupted", "error", "killed")

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
        raise TrialFailed("the run has no validation BLEU (summary.json has no validation "
                          "block with a finite bleu_after)")
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


def make_plan(base: RunConfig, space: SweepSpace, name: str, storage_url: str | None = None,
              trials: int | None = None, heartbeat: int = DEFAULT_HEARTBEAT) -> SweepPlan:
    """Check the counts and fill in the defaults; one line with the fix when one is off."""
    if space.mode == "grid" and trials is not None:
        raise WorkbenchError(f"--trials is for --search; a grid runs each of its "
                             f"{len(space.grid_points())} points once")
    count = (len(space.grid_points()) if space.mode == "grid"
             else DEFAULT_TRIALS if trials is None else trials)
    if count < 1:
        raise WorkbenchError(f"--trials must be 1 or more, got {trials}")
    if heartbeat < 1:
        raise WorkbenchError(f"--heartbeat must be 1 second or more, got {heartbeat}")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise WorkbenchError(f"--name '{name}' must be letters, digits, '.', '_' or '-' "
                             "(it names the study and its file), e.g. demo-lr")
    url = storage_url or default_storage(Path(base.output_dir).expanduser(), name)
    return SweepPlan(name, base, space, url, count, heartbeat)


# --------------------------------------------------------------------------- events and text


@dataclass(frozen=True)
class TrialStarted:
    """A worker took a point and is about to train it."""

    number: int  # Optuna's trial number
    position: int  # how many points are settled, counting this one
    total: int
    params: dict[str, Any]
    run_dir: str
    resumed: bool  # continues a cut-short trial's run folder


@dataclass(frozen=True)
class TrialEnded:
    """A trial's outcome (``finished``, ``stopped``, ``failed``) and the best so far."""

    number: int
    position: int
    total: int
    params: dict[str, Any]
    run_dir: str
    outcome: str
    value: float | None
    reason: str | None
    best: tuple[int, float] | None  # (trial number, value) of the best finished trial


@dataclass(frozen=True)
class SweepNote:
    """A line of the sweep's own: waiting for other workers, a trial taken for dead."""

    text: str
    level: str = "info"


SweepEvent = TrialStarted | TrialEnded | SweepNote


def sweep_lines(event: SweepEvent) -> list[str]:
    """The one wording of a sweep's own events, for plain lines."""
    if isinstance(event, SweepNote):
        return [("warning: " if event.level == "warning" else "") + event.text]
    head = f"trial #{event.number} ({event.position}/{event.total})  {point_text(event.params)}"
    run = Path(event.run_dir).name
    if isinstance(event, TrialStarted):
        how = "continues run" if event.resumed else "run"
        return [f"{head}  → {how} {run}"]
    best = (f"  (best so far: trial #{event.best[0]}, {event.best[1]:.2f})"
            if event.best else "")
    if event.outcome == "finished":
        return [f"{head}  → run {run}  val BLEU {event.value:.2f}{best}"]
    why = f": {event.reason}" if event.reason else ""
    return [f"{head}  → run {run}  {event.outcome}{why}{best}"]


# --------------------------------------------------------------------------- the study's trials


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
    storage_url: str
    trials: list[TrialRow]
    best: TrialRow | None
    published: str | None  # where the best trial's model was copied


def trial_params(trial: Any) -> dict[str, Any]:
    """A trial's settings: suggested, or fixed when it was enqueued and not yet run."""
    return dict(trial.params or trial.system_attrs.get("fixed_params") or {})


def trial_status(trial: Any) -> str:
    """finished / failed / running / waiting / duplicate, or how it was cut short."""
    state = trial.state.name
    if state == "COMPLETE":
        return "finished"
    if state in ("RUNNING", "WAITING"):
        return state.lower()
    # A FAIL with no outcome was failed by a heartbeat check: its worker died.
    return trial.user_attrs.get("outcome") or "killed"


def is_settled(trial: Any) -> bool:
    """A point counts as done (or taken) once a trial of it is in one of these states."""
    return trial_status(trial) in ("finished", "failed", "running", "waiting")


def rows_of(trials: list[Any]) -> list[TrialRow]:
    """The study's trials as rows, duplicates (never trained) left out."""
    return [TrialRow(t.number, trial_status(t), trial_params(t),
                     t.value if t.state.name == "COMPLETE" else None,
                     t.user_attrs.get("run_dir"), t.user_attrs.get("reason"))
            for t in trials if trial_status(t) != "duplicate"]


def best_row(rows: list[TrialRow]) -> TrialRow | None:
    """The finished trial with the highest validation BLEU (the first of equal ones)."""
    done = [r for r in rows if r.status == "finished" and r.value is not None]
    return max(done, key=lambda r: r.value or 0.0) if done else None


# --------------------------------------------------------------------------- the worker


def _sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL (None for a server or an in-memory database)."""
    if not url.startswith("sqlite:"):
        return None
    from sqlalchemy.engine import make_url  # Optuna's dependency: installed with it

    database = make_url(url).database
    return Path(database) if database and database != ":memory:" else None


@contextlib.contextmanager
def study_lock(url: str) -> Iterator[None]:
    """Hold ``<database>.lock`` for a SQLite study (see the module's "every point once").

    A server database needs none; neither does a system without ``fcntl``, where several
    workers on one SQLite file are not supported.
    """
    path = _sqlite_path(url)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        fcntl = None  # type: ignore[assignment]
    if path is None or fcntl is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class _Heartbeat:
    """Tells the study every ``interval`` seconds that this worker's trial is alive."""

    def __init__(self, storage: Any, trial_id: int, interval: int) -> None:
        self.storage, self.trial_id, self.interval = storage, trial_id, interval
        self.done = threading.Event()
        storage.record_heartbeat(trial_id)  # at once: a trial with none is never stale
        self.thread = threading.Thread(target=self._beat, daemon=True, name="sweep-heartbeat")
        self.thread.start()

    def _beat(self) -> None:
        while not self.done.wait(self.interval):
            with contextlib.suppress(Exception):  # a busy database: the next beat will do
                self.storage.record_heartbeat(self.trial_id)

    def stop(self) -> None:
        self.done.set()
        self.thread.join(timeout=5)


@dataclass
class _Claim:
    trial: Any  # optuna.Trial
    trial_id: int
    heartbeat: _Heartbeat
    resume_dir: Path | None


class SweepWorker:
    """One worker of a sweep: claims points from the study and trains them in turn."""

    def __init__(self, plan: SweepPlan, on_event: Callable[[SweepEvent | Event], None],
                 stop: threading.Event) -> None:
        self.plan, self.on_event, self.stop = plan, on_event, stop
        check_writable(plan.output_root)  # before the study's folder is made in it
        self.optuna = import_optuna()
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        self.waiting_for: set[int] = set()
        with study_lock(plan.storage_url):
            self.storage, self.study = self._open()
        self.study_id = self.storage.get_study_id_from_name(plan.name)

    def _open(self) -> tuple[Any, Any]:
        """The storage (with heartbeats) and the study, checked to be this sweep's."""
        optuna, plan = self.optuna, self.plan
        path = _sqlite_path(plan.storage_url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        # SQLite: wait for another worker's write instead of failing after the driver's 5 s.
        kwargs = {"connect_args": {"timeout": 120}} if path is not None else {}
        try:
            storage = optuna.storages.RDBStorage(
                plan.storage_url, engine_kwargs=kwargs, heartbeat_interval=plan.heartbeat,
                grace_period=plan.heartbeat * GRACE_FACTOR)
        except Exception as err:  # a bad URL, a missing driver, a server not reachable
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise WorkbenchError(f"cannot open the sweep's study at '{plan.storage_url}' "
                                 f"({reason}); pass a database URL such as sqlite:///sweep.db "
                                 "or postgresql://user:password@host/db, with its driver "
                                 "installed") from None
        study = optuna.create_study(study_name=plan.name, storage=storage,
                                    direction="maximize", load_if_exists=True)
        recorded = study.user_attrs.get("space")
        if recorded is None:
            study.set_user_attr("space", plan.space.spec())
        elif recorded != plan.space.spec():
            raise WorkbenchError(
                f"sweep '{plan.name}' in {plan.storage_url} was started as '{recorded}', not "
                f"'{plan.space.spec()}'; give the same --grid/--search, or another --name")
        return storage, study

    # ---- claiming a point

    def _trials(self) -> list[Any]:
        return self.study.get_trials(deepcopy=False)

    def _enqueue_missing(self, trials: list[Any]) -> None:
        """Enqueue each point with no trial done or under way: grid points never tried,
        and the points of trials cut short (which carry the run folder to continue)."""
        settled = {t.user_attrs.get("point") for t in trials if is_settled(t)}
        cut_short: dict[str, Any] = {}
        for t in trials:  # the latest cut-short trial of each point
            if trial_status(t) in CUT_SHORT and t.user_attrs.get(
                    "point") not in settled:
                cut_short[t.user_attrs.get("point")] = t
        for key, t in cut_short.items():
            if key is None:
                continue  # killed before its settings were drawn: nothing to continue
            attrs = {"point": key, "retry_of": t.number}
            run_dir = t.user_attrs.get("run_dir")
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
        for frozen in self.storage.get_all_trials(self.study_id, deepcopy=False,
                                                  states=states):
            trial_id = self.storage.get_trial_id_from_study_id_trial_number(
                self.study_id, frozen.number)
            try:
                taken = self.storage.set_trial_state_values(
                    trial_id, state=self.optuna.trial.TrialState.RUNNING)
            except self.optuna.exceptions.UpdateFinishedTrialError:
                continue
            if not taken:
                continue
            if self._is_duplicate(frozen):
                self.storage.set_trial_user_attr(trial_id, "outcome", "duplicate")
                self.storage.set_trial_state_values(
                    trial_id, state=self.optuna.trial.TrialState.FAIL)
                continue
            return frozen, trial_id
        return None

    def _is_duplicate(self, frozen: Any) -> bool:
        """Another trial of the same point is done, or under way with a lower number."""
        key = frozen.user_attrs.get("point")
        for other in self._trials():
            if other.number == frozen.number or other.user_attrs.get("point") != key:
                continue
            status = trial_status(other)
            if status in ("finished", "failed") or (
                    status in ("running", "waiting") and other.number < frozen.number):
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
                resume = frozen.user_attrs.get("resume")
                return _Claim(trial, trial_id, _Heartbeat(self.storage, trial_id,
                                                          self.plan.heartbeat),
                              Path(resume) if resume and _resumable(Path(resume)) else None)
            trials = self._trials()
            taken = [t for t in trials if is_settled(t)]
            if self.plan.space.mode == "search" and len(taken) < self.plan.trials:
                trial = self.study.ask()
                trial_id = self.storage.get_trial_id_from_study_id_trial_number(
                    self.study_id, trial.number)
                return _Claim(trial, trial_id, _Heartbeat(self.storage, trial_id,
                                                          self.plan.heartbeat), None)
            running = [t for t in trials if trial_status(t) == "running"]
        if running:
            self._say_waiting(running)
            return "wait"
        return "done"

    def _say_waiting(self, running: list[Any]) -> None:
        numbers = {t.number for t in running}
        if numbers - self.waiting_for:
            grace = self.plan.heartbeat * GRACE_FACTOR
            listed = ", ".join(f"#{t.number} ({point_text(trial_params(t))})" for t in running)
            self.on_event(SweepNote(
                f"waiting for trial {listed}, running in another worker (a worker that "
                f"was killed is noticed {grace} s after its last heartbeat, and its trial "
                "taken up here)"))
        self.waiting_for = numbers

    # ---- running a point

    def _suggest(self, trial: Any) -> dict[str, Any]:
        """The trial's settings: the enqueued point, or TPE's draw for a new search trial."""
        optuna = self.optuna
        # Seeded per trial number: two workers would otherwise draw the same first points.
        self.study.sampler = optuna.samplers.TPESampler(
            seed=self.plan.base.seed + trial.number, constant_liar=True)
        params: dict[str, Any] = {}
        for d in self.plan.space.dimensions:
            if d.kind in ("grid", "choice"):
                params[d.name] = trial.suggest_categorical(d.name, list(d.values))
            elif d.kind == "int":
                params[d.name] = trial.suggest_int(d.name, *d.values)
            else:
                params[d.name] = trial.suggest_float(d.name, *d.values,
                                                     log=d.kind == "loguniform")
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
        from workbench.core.train.run_training import run_training  # torch and transformers: here

        trial = claim.trial
        run_dir: Path | None = None
        try:
            trial.set_user_attr("worker", self.worker)
            params = self._suggest(trial)
            config = build_config(self.plan.base.preset,
                                  overrides={**self.plan.base.to_dict(), **params})
            if self.stop.is_set():  # Ctrl-C just after the claim: no minutes of set-up
                self._tell(claim, None, "stopped", "stopped before it started")
                return "stopped"
            # Absolute: a rerun from another working folder finds the folder again.
            run_dir = (claim.resume_dir
                       or new_run_dir(self.plan.output_root, config.preset)).resolve()
            trial.set_user_attr("run_dir", str(run_dir))
            done, total = self._counts()
            self.on_event(TrialStarted(trial.number, done + 1, total, params, str(run_dir),
                                       claim.resume_dir is not None))
            # Not published per trial: <output>/best_model becomes the best trial's model
            # at the end, under the study's lock (see result()).
            result = run_training(config, self.on_event, self.stop, run_dir=run_dir,
                                  publish=False)
            outcome, value, reason = "stopped", None, None
            if result.status == "finished":
                try:
                    value, outcome = trial_value(result.summary), "finished"
                except TrialFailed as err:
                    outcome, reason = "failed", str(err)
            elif result.status == "failed":
                outcome, reason = "failed", result.summary.error or "the run failed"
        except KeyboardInterrupt:
            self._tell(claim, None, "interrupted", "interrupted (Ctrl-C twice)")
            raise
        except WorkbenchError as err:  # the user's to fix, for every point: stop here
            self._tell(claim, None, "error", str(err))
            _remove_if_empty(run_dir)  # refused before the run began: nothing to keep
            raise
        except Exception as err:  # this point's trouble: the next one may train
            outcome, value, reason = "failed", None, f"{type(err).__name__}: {err}"
            _remove_if_empty(run_dir)
        self._tell(claim, value, outcome, reason)
        done, total = self._counts()
        self.on_event(TrialEnded(trial.number, done + (outcome == "stopped"), total,
                                 trial_params(self.storage.get_trial(claim.trial_id)),
                                 str(run_dir or ""), outcome, value, reason, self._best()))
        return outcome

    def _tell(self, claim: _Claim, value: float | None, outcome: str,
              reason: str | None) -> None:
        """Record the outcome; the study keeps the first word on a trial."""
        claim.heartbeat.stop()
        trial, states = claim.trial, self.optuna.trial.TrialState
        with contextlib.suppress(Exception):
            trial.set_user_attr("outcome", outcome)
            if reason:
                trial.set_user_attr("reason", reason)
        told = self.study.tell(trial, value if outcome == "finished" else None,
                               state=None if outcome == "finished" else states.FAIL,
                               skip_if_finished=True)
        if outcome == "finished" and told.state != states.COMPLETE:
            self.on_event(SweepNote(
                f"trial #{trial.number} was taken for dead by another worker (no heartbeat "
                f"for {self.plan.heartbeat * GRACE_FACTOR} s) while it ran; its run folder "
                "keeps the result, the study does not", "warning"))

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
                published_dir = self.plan.output_root / BEST_MODEL
                with study_lock(self.plan.storage_url):  # two workers finishing at once
                    publish_model(Path(model), published_dir)
                published = str(published_dir)
        with contextlib.suppress(Exception):
            self.storage.remove_session()
        return SweepResult(status, self.plan.storage_url, rows, best, published)


def _remove_if_empty(folder: Path | None) -> None:
    """Remove a run folder a trial made when the run never wrote into it."""
    if folder is not None:
        with contextlib.suppress(OSError):
            folder.rmdir()  # only succeeds when empty


def _resumable(run_dir: Path) -> bool:
    """A cut-short run folder a trial can continue: not finished, a complete checkpoint."""
    return (run_dir.is_dir() and not is_finished(run_dir)
            and last_complete_checkpoint(run_dir) is not None)


def run_sweep(plan: SweepPlan, on_event: EventSink | Callable[[Any], None] | None = None,
              stop: threading.Event | None = None) -> SweepResult:
    """Run one worker of ``plan`` to the end (or to ``stop``); see the module docstring."""
    worker = SweepWorker(plan, on_event or (lambda event: None), stop or threading.Event())
    return worker.run()


#: Runs a sweep's closing comparison shows at most (the best and the next ones).
MOST_COMPARED = 6


def runs_to_compare(result: SweepResult, most: int = MOST_COMPARED) -> tuple[list[str], int]:
    """The finished trials' run folders, best validation BLEU first (each folder once), at
    most ``most`` of them, and how many were left out: the best is run A of the closing
    ``compare``, so every paired test is "the best against this one"."""
    finished = sorted((row for row in result.trials
                       if row.status == "finished" and row.run_dir and row.value is not None),
                      key=lambda row: -float(row.value or 0.0))
    folders = list(dict.fromkeys(str(row.run_dir) for row in finished))
    return folders[:most], max(0, len(folders) - most)
