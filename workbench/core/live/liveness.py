"""What a run is doing now, read the same way by every front end.

``running`` and ``stopping`` while its writer lives; ``finished``, ``stopped`` and
``failed`` as its summary (or its writer's last record) says; ``killed`` when the writer
is gone without saying how it ended (kill -9, the machine lost power, an OOM kill); and
``stale`` for a writer on another host whose heartbeat is old -- the folder is on shared
storage and only that host can tell whether it lives.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from workbench.core.events import RunDone, events_from_end
from workbench.core.live.writer_record import (
    LIVE_STATES,
    STALE_SECONDS,
    WriterRecord,
    now,
    process_alive,
    this_host,
)
from workbench.core.records.status import LIVE_STATUSES, WRITING_STATUSES, EndStatus, RunStatus
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.layout import OutputFolder, RunFolder
from workbench.core.run_folder.output_folder import run_folders
from workbench.core.run_folder.summary_file import read_summary
from workbench.errors import WorkbenchError

#: How a writer's ending states read when the run left no summary.
_ENDED: dict[str, EndStatus] = {
    "finished": "finished",
    "stopped": "stopped",
    "failed": "failed",
    "lost": "stopped",
}


@dataclass(frozen=True)
class Liveness:
    """A run's status now, with the writer's record and the summary it was read from."""

    status: RunStatus
    record: WriterRecord | None
    summary: RunSummary | None

    @property
    def live(self) -> bool:
        """Whether a writer may still be writing the folder (followed, stoppable)."""
        return self.status in LIVE_STATUSES

    @property
    def writing(self) -> bool:
        """Whether a writer is known to write the folder now (a second one is refused;
        a stale writer's lock decides, see :class:`~workbench.core.live.writer.RunWriter`)."""
        return self.status in WRITING_STATUSES

    def why(self) -> str:
        """What the status rests on, for a line that explains it."""
        record = self.record
        if self.status == "stale" and record is not None:
            return (
                f"{record.who()}, last heartbeat {now() - record.heartbeat:.0f} s ago; only "
                "that host can tell whether it still runs"
            )
        if self.status == "killed":
            return (
                f"its writer, {record.who()}, is gone without a summary"
                if record
                else "no writer holds it and it has no summary"
            )
        if self.status == "failed":
            error = (record.error if record else None) or (
                self.summary.error if self.summary else None
            )
            if error:
                return error
        return record.who() if record is not None else ""


def run_liveness(run_dir: Path, at: float | None = None) -> Liveness:
    """The status of the run in ``run_dir`` (see the module's docstring)."""
    record = WriterRecord.read(run_dir)
    summary = read_summary(run_dir)
    state = record.state if record is not None else None
    live_state = next((s for s in LIVE_STATES if s == state), None)  # typed as a status
    if record is not None and live_state is not None:
        if record.host == this_host():
            alive = process_alive(record.pid, record.start_ticks)
            if alive:
                return Liveness(live_state, record, summary)
            # Killed between writing its finished summary and letting go: finished.
            done = _finished_since(run_dir, summary, record.started)
            return Liveness("finished" if done else "killed", record, summary)
        age = (at if at is not None else now()) - record.heartbeat
        return Liveness("stale" if age > STALE_SECONDS else live_state, record, summary)
    if record is not None:  # newer than a summary an earlier, resumed try left
        if _finished_since(run_dir, summary, record.started):
            return Liveness("finished", record, summary)  # what failed came after it
        return Liveness(_ENDED.get(record.state, "failed"), record, summary)
    if summary is not None and summary.status is not None:  # a run no writer record names
        return Liveness(summary.status, record, summary)
    if _said_something(RunFolder(run_dir).log):
        # A try that failed before its run began takes its record away; its log says why.
        return Liveness("failed", None, summary)
    return Liveness("killed", None, summary)


def _said_something(log: Path) -> bool:
    try:
        return log.stat().st_size > 0
    except OSError:
        return False


def _finished_since(run_dir: Path, summary: RunSummary | None, since: float) -> bool:
    """Whether the folder holds a finished summary written after ``since``."""
    if summary is None or summary.status != "finished":
        return False
    try:
        return RunFolder(run_dir).summary.stat().st_mtime >= since
    except OSError:
        return False


def finish_time(run_dir: Path) -> float | None:
    """When the run finished (and published its model), as a Unix time: the time its
    ``RunDone`` event was written, else its summary's (a run from before events were
    timed)."""
    folder = RunFolder(run_dir)
    for event, written in events_from_end(folder.metrics):
        if isinstance(event, RunDone) and event.status == "finished":
            return written
    try:
        return folder.summary.stat().st_mtime
    except OSError:
        return None


def live_runs(output_root: Path) -> list[tuple[Path, Liveness]]:
    """The runs under ``output_root`` that a writer writes now, newest first (a stale
    one, on another host, is left to be named)."""
    found = ((run, run_liveness(run)) for run in run_folders(output_root))
    return [(run, live) for run, live in found if live.writing]


def pick_run(output_root: Path, name: str | None, live_only: bool = False) -> Path:
    """The run a command means: ``name`` (a run id under ``<output>/runs`` or a folder),
    else the newest live run, else (unless ``live_only``) the newest run."""
    runs = OutputFolder(output_root).runs
    if name:
        for path in (OutputFolder(output_root).run(name), Path(name).expanduser()):
            if path.is_dir() and RunFolder(path).in_runs_folder:
                return path
        raise WorkbenchError(
            f"no run '{name}' under {runs}; give a run id as `workbench runs` lists them, "
            "or a run folder"
        )
    live = live_runs(output_root)
    if live:
        return live[0][0]
    folders = run_folders(output_root)
    if folders and not live_only:
        return folders[0]
    raise WorkbenchError(
        f"no {'live ' if live_only else ''}run under {runs}"
        + ("; `workbench runs` lists them all" if folders else "")
    )
