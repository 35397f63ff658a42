"""One writer per run folder, for the writer's whole life.

The writer takes an exclusive ``flock`` on ``writer.lock`` the moment it knows its folder
and keeps it until the run ends; a second writer -- ``train --resume``, the TUI's Start or
Resume, a sweep worker -- fails to take it and is refused in one line that names the
holder and how to watch or stop it. The kernel drops the lock when the holder dies, however
it dies, so a killed run never leaves its folder locked.

``flock`` belongs to the open file, and a forked child shares it: a DataLoader worker
would keep the folder locked after its parent was killed. So the descriptor is opened
close-on-exec and closed in every forked child (``os.register_at_fork``).

Beside the lock, the writer keeps its :class:`~workbench.core.live.writer_record.WriterRecord`
(host, pid, start time, state, heartbeat) and, on a thread of its own, polls the folder for
a stop request (``workbench stop``, ``x`` in any TUI): it sets the run's stop flag, so the
Trainer stops at the next step with a checkpoint, as after Ctrl-C.

Holding the folder also names the run in the use records of the cache entries its thread
uses (:mod:`workbench.core.cache_use`): while the writer lives, pruning leaves them alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from dataclasses import replace
from pathlib import Path

from workbench.core.cache_use import attach_run, detach_run, expect_run
from workbench.core.events import EventSink, Level, Note
from workbench.core.live.run_log import RunLog
from workbench.core.live.stop_request import clear_stop_request, read_stop_request
from workbench.core.live.writer_record import (
    HEARTBEAT_SECONDS,
    WriterRecord,
    now,
    start_ticks,
    this_host,
)
from workbench.core.run_folder.layout import RunFolder
from workbench.core.views.live_text import output_dir_flag
from workbench.errors import WorkbenchError

#: Seconds between two looks for a stop request: a stop is seen within about this long.
POLL_SECONDS = 0.5

#: Lock descriptors this process holds, closed in forked children.
_HELD: set[int] = set()


def _drop_locks_in_child() -> None:
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_drop_locks_in_child)


class RunFolderBusy(WorkbenchError):
    """Another live process writes the run folder."""


def busy_message(run_dir: Path, record: WriterRecord | None) -> str:
    """The one line that refuses a second writer: who holds the run, how to watch or stop it."""
    name = run_dir.name
    where = output_dir_flag(RunFolder(run_dir).output_root)
    holder = record.who() if record is not None else "another process"
    return (
        f"run {name} is being trained by {holder}; watch it with `workbench logs {name} "
        f"--follow{where}` or `workbench tui{where}`, stop it with "
        f"`workbench stop {name}{where}`"
    )


class RunWriter:
    """The right to write one run folder, held from :meth:`hold` until :meth:`release`.

    ``stop`` is the run's stop flag: a stop request left in the folder sets it.
    """

    def __init__(self, stop: threading.Event, on_event: EventSink | None = None) -> None:
        self.stop = stop
        self.on_event = on_event
        self.run_dir: Path | None = None
        self.record: WriterRecord | None = None
        self.before: WriterRecord | None = None
        #: Whether the run has begun writing its folder; until then a failed try to
        #: continue a run leaves the run's record as the run's last writer left it.
        self.began = False
        self._fd: int | None = None
        self._held = False
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._write_lock = threading.Lock()
        #: The cache entries this thread uses wait for the run's folder (cache_use), and
        #: are let go by release, whichever thread ends the run.
        self._uses = expect_run()

    def hold(self, run_dir: Path, log: RunLog | None = None) -> None:
        """Take ``run_dir`` for this process, or raise :class:`RunFolderBusy`; then ``log``
        (the run's lines) writes into it."""
        if self.run_dir != run_dir:
            self._take(run_dir)
        if log is not None:
            log.open(run_dir)

    def _take(self, run_dir: Path) -> None:
        lock = RunFolder(run_dir).writer_lock
        fd: int | None = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        assert fd is not None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunFolderBusy(busy_message(run_dir, WriterRecord.read(run_dir))) from None
        except OSError as err:  # a file system without locks (Lustre without -o flock)
            os.close(fd)
            fd = None
            self._say(
                f"the file system of {run_dir} does not lock files ({err.strerror}), so a "
                "second writer of this run would not be refused",
                "warning",
            )
        if fd is not None:
            _HELD.add(fd)
        self._fd, self.run_dir, self._held = fd, run_dir, True
        self.before = WriterRecord.read(run_dir)  # the last writer's, for a try that fails
        clear_stop_request(run_dir)  # meant for the writer before this one
        started = now()
        pid = os.getpid()
        self.record = WriterRecord(this_host(), pid, start_ticks(pid), started, started, "running")
        self.record.write(run_dir)
        attach_run(run_dir, self._uses)  # the cache entries this run uses name it; it now lives
        self._thread = threading.Thread(target=self._watch, daemon=True, name="run-writer")
        self._thread.start()

    def release(self, state: str, error: str | None = None) -> None:
        """Record how the run ended and let the folder go (nothing, if never held).

        A try that fails before the run began writing (``--resume`` refused by a check,
        an unreachable Hub) does not end the run: its earlier writer's record stays.
        """
        detach_run(self._uses)  # and a try that never held a folder lets its cache entries go
        if not self._held or self.run_dir is None:
            return
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if state == "failed" and not self.began:
            with contextlib.suppress(OSError):
                if self.before is not None:
                    self.before.write(self.run_dir)
                else:  # the folder is as the caller made it, but for what the run said
                    folder = RunFolder(self.run_dir)
                    folder.writer_record.unlink(missing_ok=True)
                    folder.writer_lock.unlink(missing_ok=True)
                    log = folder.log
                    if log.is_file() and log.stat().st_size == 0:
                        log.unlink()
        else:
            self._rewrite(state=state, error=error)
        clear_stop_request(self.run_dir)
        if self._fd is not None:
            _HELD.discard(self._fd)
            os.close(self._fd)  # the lock goes with the last descriptor
        self._fd, self._held = None, False

    def _say(self, text: str, level: Level = "info") -> None:
        if self.on_event is not None:
            self.on_event(Note(text, level))

    def _rewrite(self, **changes: object) -> None:
        if self.record is None or self.run_dir is None:
            return
        with self._write_lock:
            self.record = replace(self.record, heartbeat=now(), **changes)  # type: ignore[arg-type]
            with contextlib.suppress(OSError):  # a full disk must not end the run
                self.record.write(self.run_dir)

    def _watch(self) -> None:
        """Heartbeats, stop requests, and the ``stopping`` state, until released."""
        assert self.run_dir is not None
        last_beat = now()
        while not self._done.wait(POLL_SECONDS):
            request = read_stop_request(self.run_dir)
            if request is not None and not self.stop.is_set():
                self.stop.set()
                self._say(f"stop requested ({request}); stopping after this step with a checkpoint")
            if self.stop.is_set() and self.record is not None and self.record.state == "running":
                self._rewrite(state="stopping")
                last_beat = now()
            elif now() - last_beat >= HEARTBEAT_SECONDS:
                self._rewrite()
                last_beat = now()
