"""A stop request left in a run folder: how any front end stops a run it did not start.

The viewer writes the request; the run's writer polls for it
(:class:`~workbench.core.live.writer.RunWriter`) and stops at the next step with a
checkpoint. No signal is sent, so it works the same for a headless run, a detached one, a
run inside another TUI (whose SIGTERM would close that TUI) and a run on another host.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from workbench.core.atomic import write_json
from workbench.core.live.liveness import Liveness, run_liveness
from workbench.core.live.writer_record import now, this_host
from workbench.core.records.files import read_json_dict
from workbench.core.records.typed import decode
from workbench.core.run_folder.layout import RunFolder
from workbench.errors import WorkbenchError


@dataclass(frozen=True)
class StopRequest:
    """``stop.request``: who asked the run to stop, from where, and when."""

    by: str = "a viewer"
    host: str = "?"
    pid: int | None = None
    time: float | None = None


def leave_stop_request(run_dir: Path, by: str) -> None:
    """Ask the run's writer to stop; ``by`` says who asked (``workbench stop``, the TUI)."""
    request = StopRequest(by, this_host(), os.getpid(), round(now(), 3))
    write_json(RunFolder(run_dir).stop_request, asdict(request))


def read_stop_request(run_dir: Path, notes: list[str] | None = None) -> str | None:
    """Who asked the run to stop (``workbench stop on host gpu1``), or None if nobody has;
    a request that does not read still stops the run, and ``notes`` says what was odd."""
    path = RunFolder(run_dir).stop_request
    data = read_json_dict(path)
    if data is None:
        return "a stop request" if path.exists() else None
    request = decode(StopRequest, data, notes, path.name) or StopRequest()
    return f"by {request.by} on host {request.host}"


def clear_stop_request(run_dir: Path) -> None:
    """Remove a request (a new writer must not obey its predecessor's)."""
    with contextlib.suppress(OSError):
        RunFolder(run_dir).stop_request.unlink(missing_ok=True)


def request_stop(run_dir: Path, by: str) -> Liveness:
    """Ask the live run in ``run_dir`` to stop; one line saying so when it is not live."""
    live = run_liveness(run_dir)
    if not live.live:
        why = live.why()
        raise WorkbenchError(
            f"run {run_dir.name} is not running (status: {live.status}"
            + (f"; {why}" if why else "")
            + "), so there is nothing to stop"
        )
    leave_stop_request(run_dir, by)
    return live


def wait_until_ended(run_dir: Path, timeout: float, poll: float = 0.5) -> Liveness:
    """The run's liveness once it is no longer live, or after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    live = run_liveness(run_dir)
    while live.live and time.monotonic() < deadline:
        time.sleep(poll)
        live = run_liveness(run_dir)
    return live
