"""The writer's record beside its lock, and the process facts it is checked against.

A pid alone does not say a writer is alive: pids are reused, and a process killed with
-9 leaves its record saying ``running``. So the record keeps the host, the pid and the
process's start time (Linux's ``/proc/PID/stat`` field 22, clock ticks since boot): on the
same host a viewer trusts the record only while that pid still has that start time. On
another host (a run folder on shared storage) only the heartbeat can tell, so a writer
rewrites its record every :data:`HEARTBEAT_SECONDS`.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from workbench.core.atomic import write_json
from workbench.core.records.files import read_json_dict
from workbench.core.records.status import RunStatus
from workbench.core.records.typed import decode
from workbench.core.run_folder.layout import RunFolder

#: Seconds between two rewrites of the record by a live writer.
HEARTBEAT_SECONDS = 15.0
#: A writer on another host whose heartbeat is older than this is taken as ``stale``:
#: eight missed heartbeats, so a busy file server does not make a live run look dead.
STALE_SECONDS = 120.0
#: The writer's states while it lives; any other state in a record is how it ended.
LIVE_STATES: tuple[RunStatus, ...] = ("running", "stopping")


@dataclass(frozen=True)
class WriterRecord:
    """``writer.json``: who holds the run folder, since when, and how it is doing."""

    host: str
    pid: int
    start_ticks: int | None  # the process's start time, to tell a reused pid apart
    started: float  # Unix time the writer took the folder
    heartbeat: float  # Unix time of the writer's last rewrite of this record
    state: str  # running, stopping, or how it ended: finished, stopped, failed, lost
    error: str | None = None  # why it failed, when it did

    @classmethod
    def read(cls, run_dir: Path, notes: list[str] | None = None) -> WriterRecord | None:
        """The record in ``run_dir``, or None (no writer ever held it, or unreadable); what
        did not read is said in ``notes``."""
        path = RunFolder(run_dir).writer_record
        data = read_json_dict(path)
        if data is None:
            return None
        return decode(cls, data, notes, path.name)

    def write(self, run_dir: Path) -> None:
        """Replace the record atomically: a viewer reads the old one or the new one."""
        write_json(RunFolder(run_dir).writer_record, asdict(self))

    def who(self) -> str:
        """``pid 1234 on host gpu1``: the writer as a line names it."""
        return f"pid {self.pid} on host {self.host}"


def this_host() -> str:
    """The name this machine's records carry."""
    return socket.gethostname()


def now() -> float:
    """The Unix time records are written in."""
    return time.time()


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (which may hold spaces),
    or None where there is no such process or no ``/proc``."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (None without ``/proc``)."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields and len(fields) > 19 else None


def process_alive(pid: int, ticks: int | None) -> bool:
    """Is process ``pid`` on this host the one that started at ``ticks``?

    A zombie (killed, not yet reaped by its parent) is dead; ``kill(pid, 0)`` failing with
    EPERM means a live process of another user.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    fields = _stat_fields(pid)
    if fields is None:
        return not Path("/proc").is_dir()  # gone just now; without /proc, kill(pid, 0) decides
    if fields[0] in ("Z", "X"):
        return False
    return ticks is None or len(fields) <= 19 or int(fields[19]) == ticks
