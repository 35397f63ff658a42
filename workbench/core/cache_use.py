"""Who uses a cache entry and when, and whether a process is reading it now: what
``workbench cache`` lists and what ``workbench cache prune`` must respect.

An entry (a prepared-data folder, a "before" file, a Hub sample, a ranked-lines folder)
holds nothing about its users, and the code that reads it is spread over data/,
evaluate/ and preferences/. So each of them calls one helper, :func:`using`, around its
read or its build, and two files kept beside the entries, in a hidden ``.uses/`` folder
of the entry's folder, say the rest:

- ``<name>.use``: one JSON line per use (:class:`Use`: the time, and the run folder it
  was for when known), appended in one ``write`` with ``O_APPEND``, so processes that
  use one entry at once never lose or mix each other's lines; a line a kill tore is
  skipped when read. An entry without the file was made before uses were recorded.
- ``<name>.lock``: an ``flock``. A user holds it shared while it reads or prepares the
  entry; the pruner takes it exclusive without waiting (:func:`claimed`) and skips an
  entry it cannot take. The pruner unlinks the file while it holds it, so a user that
  opened it meanwhile finds another file under the name and locks that one instead: one
  lock per entry, always.

A run prepares its data before its run folder exists (a new run makes its folder once
every check has passed). So once a thread has said a run is starting (:func:`expect_run`,
when the run's writer is made), a use it makes before it holds a run folder is kept
pending, its shared lock held, until the writer takes the folder (:func:`attach_run`: the
run is added to each pending entry's record, and the locks let go) or the run ends
(:func:`detach_run`); a torchrun rank other than 0, which holds no folder, keeps them to
its end. An entry is thus never unprotected between its use and its run's writer, which
pruning then finds alive (:mod:`workbench.core.live.liveness`). A use outside a run (the
TUI's Dataset pane) lets its lock go at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
import weakref
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import quote

from workbench.core.records.typed import decode

#: The hidden folder beside the entries that holds their use records and locks.
USES_FOLDER = ".uses"


@dataclass(frozen=True)
class Use:
    """One use of an entry, as one line of its ``.use`` file."""

    time: float  # a Unix time
    run: str | None = None  # the run folder it was for (absolute), when known


@dataclass(frozen=True)
class EntryUses:
    """What an entry's use record says: its last use, and every run that used it, in the
    order they first did."""

    last_used: float
    runs: tuple[str, ...]


def use_record(entry: Path) -> Path:
    """``.uses/<name>.use`` beside ``entry``: its uses, one JSON line each."""
    return entry.parent / USES_FOLDER / f"{quote(entry.name, safe='')}.use"


def lock_file(entry: Path) -> Path:
    """``.uses/<name>.lock`` beside ``entry``: held shared by users, exclusive to prune."""
    return entry.parent / USES_FOLDER / f"{quote(entry.name, safe='')}.lock"


def read_uses(entry: Path) -> EntryUses | None:
    """The uses ``entry``'s record holds, or None without a record (or a line in it)."""
    try:
        text = use_record(entry).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    uses = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            use = decode(Use, json.loads(line))
            if use is not None:
                uses.append(use)
    if not uses:
        return None
    runs = dict.fromkeys(use.run for use in uses if use.run)  # first use first, once each
    return EntryUses(max(use.time for use in uses), tuple(runs))


def _append(entry: Path, run: Path | None) -> None:
    """Add one use of ``entry`` (now, for ``run``) to its record; a cache that cannot be
    written (read-only, a full disk) records nothing and fails nothing."""
    line = json.dumps(asdict(Use(time.time(), str(run) if run else None))) + "\n"
    with contextlib.suppress(OSError):
        fd = os.open(use_record(entry), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


class _Lock:
    """One ``flock`` on an entry's lock file, let go by :meth:`close` (or when dropped,
    as a thread's pending uses are when the thread ends). ``fd`` None: a cache whose file
    system cannot lock (or be written), used unprotected, as with no pruner."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        if fd is not None:
            _OPEN.add(self)

    @classmethod
    def take(cls, entry: Path, exclusive: bool) -> _Lock | None:
        """The lock of ``entry``: shared (waiting while a pruner holds it), or exclusive
        without waiting, None when a process holds it.

        A lock file this process cannot open (another user's, in a shared cache) is no
        lock: a user goes on without one, and a pruner leaves the entry alone, since it
        cannot tell whether that user reads it now. A file system without locks makes
        every lock free (the live-run rule still holds)."""
        path = lock_file(entry)
        how = fcntl.LOCK_EX | fcntl.LOCK_NB if exclusive else fcntl.LOCK_SH
        unknown = None if exclusive else cls(None)
        with contextlib.suppress(OSError):  # made by another user, or not ours to make
            path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            try:
                fd = _open_lock(path)
            except OSError:
                return unknown
            try:
                fcntl.flock(fd, how)
            except BlockingIOError:
                os.close(fd)
                return None
            except OSError:  # a file system without locks (Lustre without -o flock)
                os.close(fd)
                return cls(None)
            if _same_file(fd, path):
                return cls(fd)
            os.close(fd)  # a pruner removed this file meanwhile: lock the one there now

    def close(self) -> None:
        """Let the lock go (once)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        _OPEN.discard(self)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at exit the descriptor goes with the process
            self.close()


def _open_lock(path: Path) -> int:
    """A descriptor of the lock file at ``path``, made if missing (writable by the group
    and others as the umask allows, so a shared cache's users lock the same file); read
    only where this user may not write it: ``flock`` takes either kind of lock on it."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except PermissionError:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC)


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        named = os.stat(path)
    except OSError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


#: Every lock this process holds: a forked child (a DataLoader worker, a data worker)
#: closes its copies, so that it never keeps an entry busy after its parent has gone.
_OPEN: weakref.WeakSet[_Lock] = weakref.WeakSet()


def _close_in_child() -> None:
    for lock in list(_OPEN):
        if lock.fd is not None:
            with contextlib.suppress(OSError):
                os.close(lock.fd)
            lock.fd = None
    _OPEN.clear()


os.register_at_fork(after_in_child=_close_in_child)


class RunUses:
    """One thread's run, as its uses see it: the run they are for, whether one is
    starting, and its uses still waiting for its folder. The writer that started the run
    keeps this object (:func:`expect_run`), so the run's end lets its state go whichever
    thread ends it."""

    def __init__(self) -> None:
        self.run: Path | None = None
        self.starting = False
        self.pending: dict[Path, _Lock] = {}


class _ThreadUses(threading.local):
    """Each thread's :class:`RunUses`."""

    def __init__(self) -> None:
        self.uses = RunUses()


_THREAD = _ThreadUses()


@contextlib.contextmanager
def using(entry: Path) -> Iterator[None]:
    """Hold ``entry`` (a file or folder of a cache) shared while the block reads or
    prepares it, then record the use if the entry is there.

    The block may find the entry missing (never made, or pruned just before): it builds it
    or goes without, as it would with no pruner. In a run that does not hold its folder
    yet, the lock stays held until it does (see the module's docstring)."""
    entry = Path(entry).absolute()
    uses = _THREAD.uses
    lock = _Lock.take(entry, exclusive=False)
    kept = False
    try:
        yield
        if entry.exists():
            _append(entry, uses.run)
            waiting = uses.run is None and uses.starting
            if waiting and lock is not None and entry not in uses.pending:
                uses.pending[entry] = lock
                kept = True
    finally:
        if lock is not None and not kept:
            lock.close()


def expect_run() -> RunUses:
    """A run starts on this thread: its uses wait for its folder (:func:`attach_run`).
    Returns the state that :func:`attach_run` and :func:`detach_run` are given."""
    uses = _THREAD.uses
    uses.starting = True
    return uses


def attach_run(run_dir: Path, uses: RunUses | None = None) -> None:
    """From now on the uses of the run's thread (``uses``, else this thread's) are for
    ``run_dir``; those made before are recorded for it, and their locks let go (its
    writer now says the run is alive)."""
    uses = uses or _THREAD.uses
    run = Path(run_dir).resolve()
    uses.run = run
    for entry, lock in uses.pending.items():
        if entry.exists():
            _append(entry, run)
        lock.close()
    uses.pending.clear()


def detach_run(uses: RunUses | None = None) -> None:
    """The run has ended: its thread's later uses (``uses``, else this thread's) are for
    no run, and any use still pending lets its lock go."""
    uses = uses or _THREAD.uses
    uses.run = None
    uses.starting = False
    for lock in uses.pending.values():
        lock.close()
    uses.pending.clear()


@contextlib.contextmanager
def claimed(entry: Path) -> Iterator[bool]:
    """Hold ``entry`` exclusive for removing it, without waiting: the block gets False
    when a process uses it now (the entry must then be left alone), True otherwise.

    Once the block has removed the entry, its record and lock file go too, the lock still
    held, so that a user waiting for it finds the name free and takes a new lock."""
    entry = Path(entry).absolute()
    lock = _Lock.take(entry, exclusive=True)
    try:
        yield lock is not None
    finally:
        if lock is not None:
            if not entry.exists():
                with contextlib.suppress(OSError):
                    use_record(entry).unlink(missing_ok=True)
                    lock_file(entry).unlink(missing_ok=True)
            lock.close()
