"""What lets several workers share one study: opening it (with heartbeats) and checking it
is this sweep's, and the file lock around claims on SQLite."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench.core.experiments.sweep.plan import GRACE_FACTOR, SweepPlan
from workbench.errors import WorkbenchError


def sqlite_path(url: str) -> Path | None:
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
    path = sqlite_path(url)
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


def open_study(optuna: Any, plan: SweepPlan) -> tuple[Any, Any]:
    """The storage (with heartbeats) and the study, checked to be this sweep's."""
    path = sqlite_path(plan.storage_url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    # SQLite: wait for another worker's write instead of failing after the driver's 5 s.
    kwargs = {"connect_args": {"timeout": 120}} if path is not None else {}
    try:
        storage = optuna.storages.RDBStorage(
            plan.storage_url,
            engine_kwargs=kwargs,
            heartbeat_interval=plan.heartbeat,
            grace_period=plan.heartbeat * GRACE_FACTOR,
        )
    except Exception as err:  # a bad URL, a missing driver, a server not reachable
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise WorkbenchError(  # it hides the password the URL or the reason may hold
            f"cannot open the sweep's study at '{plan.storage_url}' ({reason}); pass a "
            "database URL such as sqlite:///sweep.db or postgresql://user@host/db (the "
            "password in PGPASSWORD or the URL), with its driver installed"
        ) from None
    study = optuna.create_study(
        study_name=plan.name, storage=storage, direction="maximize", load_if_exists=True
    )
    recorded = study.user_attrs.get("space")
    if recorded is None:
        study.set_user_attr("space", plan.space.spec())
    elif recorded != plan.space.spec():
        raise WorkbenchError(
            f"sweep '{plan.name}' in {plan.storage_url} was started as "
            f"'{recorded}', not "
            f"'{plan.space.spec()}'; give the same --grid/--search, or another --name"
        )
    return storage, study
