"""What lets several workers share one study: opening it (with heartbeats) and checking it
is this sweep's, and the study's lock around what must not interleave: creating the
study's tables, claiming a point, taking over a run folder, publishing the best model.

The lock is a file lock beside a SQLite database and an advisory lock on a PostgreSQL
server; the system releases either when its holder dies, even by kill -9. SQLite's driver
reads a trial's state and writes it in two transactions, so two workers could claim one
trial; PostgreSQL creates each table's row type without waiting for another session that
creates the same, so two workers starting together on a fresh database could fail with
``UniqueViolation`` on ``pg_type_typname_nsp_index``. Other server databases get no lock:
their claims rely on Optuna's ``SELECT ... FOR UPDATE`` and the duplicate check.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench.core import DISTRIBUTION
from workbench.core.experiments.sweep.optuna_study import StudyAttrs
from workbench.core.experiments.sweep.plan import GRACE_FACTOR, SweepPlan
from workbench.core.records.typed import decode
from workbench.errors import WorkbenchError

#: What to install for a driver SQLAlchemy could not import, by its module's name.
DRIVER_PACKAGES = {
    "psycopg": f"'{DISTRIBUTION}[postgres]' (psycopg 3, SQLAlchemy's driver for postgresql://)",
    "psycopg2": "psycopg2-binary",
    "pymysql": "PyMySQL",
    "MySQLdb": "mysqlclient",
}
#: The advisory lock's key (64 bits): one per database, shared by every sweep in it, as
#: the tables are; it is held for milliseconds at a time.
ADVISORY_KEY = int.from_bytes(hashlib.sha256(b"workbench sweep").digest()[:8], "big", signed=True)


def backend(url: str) -> str | None:
    """The database kind of a URL (``sqlite``, ``postgresql``, ...), None when unreadable
    (opening the study then says what is wrong with it)."""
    from sqlalchemy.engine import make_url  # Optuna's dependency: installed with it

    try:
        return make_url(url).get_backend_name()
    except Exception:
        return None


def sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL (None for a server or an in-memory database)."""
    if backend(url) != "sqlite":
        return None
    from sqlalchemy.engine import make_url

    database = make_url(url).database
    return Path(database) if database and database != ":memory:" else None


def driver_missing(url: str, err: ImportError) -> WorkbenchError:
    """One line naming the package of the driver ``url`` needs (``err``: its import)."""
    cause = err.__cause__ if isinstance(err.__cause__, ImportError) else err  # Optuna wraps it
    module = (cause.name or "").split(".")[0]
    if not module:
        return unreachable(url, err)
    return WorkbenchError(
        f"the sweep's study at '{url}' needs the database driver {module}, which is not "
        f"installed: pip install {DRIVER_PACKAGES.get(module, module)}"
    )


def unreachable(url: str, err: Exception) -> WorkbenchError:
    """One line for a study that cannot be opened: a bad URL, a server not reachable."""
    reason = str(err).splitlines()[0] if str(err) else type(err).__name__
    return WorkbenchError(  # it hides the password the URL or the reason may hold
        f"cannot open the sweep's study at '{url}' ({reason}); pass a database URL such as "
        "sqlite:///sweep.db or postgresql://user@host/db (the password in PGPASSWORD or "
        "the URL), with its driver installed"
    )


@contextlib.contextmanager
def study_lock(url: str) -> Iterator[None]:
    """Hold the study's lock (see the module docstring) while the block runs.

    A system without ``fcntl``, where several workers on one SQLite file are not
    supported, and server databases other than PostgreSQL get none.
    """
    kind = backend(url)
    if kind == "postgresql":
        with _advisory_lock(url):
            yield
        return
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


#: One engine per URL for the advisory lock (NullPool: no connection outlives a lock).
_LOCK_ENGINES: dict[str, Any] = {}


@contextlib.contextmanager
def _advisory_lock(url: str) -> Iterator[None]:
    """``pg_advisory_lock`` on a connection of its own, closed (which releases it) after.

    Autocommit, so the connection is never left idle in a transaction, which a server's
    ``idle_in_transaction_session_timeout`` would end, lock and all.
    """
    import sqlalchemy
    from sqlalchemy.pool import NullPool

    try:
        engine = _LOCK_ENGINES.get(url)
        if engine is None:
            engine = sqlalchemy.create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
            _LOCK_ENGINES[url] = engine
        connection = engine.connect()
    except ImportError as err:
        raise driver_missing(url, err) from None
    except Exception as err:
        raise unreachable(url, err) from None
    with connection:
        try:
            lock = sqlalchemy.text("SELECT pg_advisory_lock(:key)")
            connection.execute(lock, {"key": ADVISORY_KEY})
        except Exception as err:  # the server went away
            raise unreachable(url, err) from None
        yield


def open_study(optuna: Any, plan: SweepPlan) -> tuple[Any, Any]:
    """The storage (with heartbeats) and the study, checked to be this sweep's; call it
    under :func:`study_lock`."""
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
    except ImportError as err:
        raise driver_missing(plan.storage_url, err) from None
    except Exception as err:  # a bad URL, a server not reachable
        raise unreachable(plan.storage_url, err) from None
    study = optuna.create_study(
        study_name=plan.name, storage=storage, direction="maximize", load_if_exists=True
    )
    recorded = (decode(StudyAttrs, study.user_attrs) or StudyAttrs()).space
    if recorded is None:
        study.set_user_attr("space", plan.space.spec())
    elif recorded != plan.space.spec():
        raise WorkbenchError(
            f"sweep '{plan.name}' in {plan.storage_url} was started as "
            f"'{recorded}', not "
            f"'{plan.space.spec()}'; give the same --grid/--search, or another --name"
        )
    return storage, study
