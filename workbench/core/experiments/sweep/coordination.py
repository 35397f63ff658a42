"""What lets several workers share one study: the file lock around claims on SQLite and
each running trial's heartbeat."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any


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


class Heartbeat:
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
