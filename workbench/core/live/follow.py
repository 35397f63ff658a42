"""The typed reader of ``metrics.jsonl``'s events, whole or as it grows; its decoding and
its reasons for skipping a line are shared with :mod:`.run_metrics`, which reads a whole
log for figures with the logged steps as columns.

A writer appends one whole line per ``write()``, but a reader can still meet a line
half-written (it reads while the writer writes) or torn for good (the writer was killed).
So the reader parses only up to the last newline and keeps the rest for its next read;
a line that does not parse, or an event of another workbench version, is skipped rather
than fatal. A file that shrank or was replaced (another inode) is read again from the
start. TensorBoard follows its event files the same way, by polling.

Front ends that look at the same runs again and again (the TUI's Runs and Training panes,
every two seconds) read through :func:`followed_events`: a file is read once, kept while
its inode, size and modification time say it has not changed, and a file that grew is
read from where the last look stopped. A finished run of 300,000 logged steps is then
parsed once per session instead of at every refresh.

A front end that follows a live run (``workbench logs --follow``, the TUI's Training
pane) looks through :meth:`RunReader.look`: what the run wrote since the last look and
whether its writer still lives; once it is gone, the lines it wrote as it ended.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.events import Event, event_from_record
from workbench.core.live.liveness import Liveness, run_liveness
from workbench.core.records.files import Stamp, file_stamp
from workbench.core.run_folder.layout import RunFolder

#: Lines decoded by one ``json.loads`` (as one JSON array): a third faster than a call per
#: line on a 300,000-step log. A block is decoded line by line instead when a line of it
#: is not braced like one object, when it does not decode (a torn line), or when it
#: decodes to another count of values than it has lines.
DECODE_BLOCK = 4096

#: What :func:`decoded_records` yields for a line that is not JSON.
NOT_JSON = "not JSON (a torn line?)"


def decoded_records(lines: Sequence[bytes]) -> Iterator[tuple[int, Any, str]]:
    """``(index, record, "")`` for each line of ``lines`` that holds JSON, and
    ``(index, None, why)`` for each that does not; blank lines are left out."""
    for start in range(0, len(lines), DECODE_BLOCK):
        block = [(start + i, line) for i, line in enumerate(lines[start : start + DECODE_BLOCK])]
        block = [(i, line.strip()) for i, line in block if line.strip()]
        records = None
        if all(line[:1] == b"{" and line[-1:] == b"}" for _, line in block):
            try:
                records = json.loads(b"[" + b",".join(line for _, line in block) + b"]")
            except ValueError:  # a torn line, or bytes that are not UTF-8
                records = None
        if isinstance(records, list) and len(records) == len(block):
            for (i, _), record in zip(block, records, strict=True):
                yield i, record, ""
            continue
        for i, line in block:
            try:
                yield i, json.loads(line.decode("utf-8", errors="replace")), ""
            except ValueError:  # JSONDecodeError is a ValueError
                yield i, None, NOT_JSON


def record_event(record: Any) -> tuple[Event | None, str]:
    """The event a decoded ``metrics.jsonl`` record holds and "", or None and why it does
    not read (not an object, an unknown event, a field its event does not have or lacks)."""
    if not isinstance(record, dict):
        return None, "not a JSON object"
    try:
        return event_from_record(record), ""
    except (ValueError, TypeError, KeyError) as err:
        return None, str(err)


class GrowingFile:
    """The whole lines added to a file since the last read (a log, ``metrics.jsonl``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0  # bytes read, up to a newline
        self.inode: int | None = None
        self.restarts = 0  # times the file was found replaced or truncated after a read

    def read_new_lines(self) -> list[bytes]:
        """Lines (without their newline) completed since the last call; all, the first time."""
        try:
            with self.path.open("rb") as fh:
                stat = os.fstat(fh.fileno())
                if stat.st_ino != self.inode or stat.st_size < self.offset:
                    if self.inode is not None:
                        self.restarts += 1
                    self.inode, self.offset = stat.st_ino, 0  # replaced or truncated
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1  # a line still being written waits for the next read
        self.offset += end
        return data[: end - 1].split(b"\n") if end else []  # a carriage return is no line end

    def read_new_text(self) -> list[str]:
        """:meth:`read_new_lines` as text."""
        return [line.decode("utf-8", errors="replace") for line in self.read_new_lines()]


class MetricsFollower:
    """Reads the events added to a ``metrics.jsonl`` since its last read."""

    def __init__(self, path: Path, notes: list[str] | None = None) -> None:
        self.file = GrowingFile(path)
        self.skipped = 0  # lines that did not read
        self.lines = 0  # lines read so far
        self.notes = notes  # where each skipped line is said, when given

    def read_new(self) -> list[Event]:
        """The events whole lines added since the last call recorded (all, the first time)."""
        events = []
        lines = self.file.read_new_lines()
        for i, record, why in decoded_records(lines):
            event, why = (None, why) if why else record_event(record)
            if event is not None:
                events.append(event)
                continue
            self.skipped += 1
            if self.notes is not None:
                self.notes.append(skipped_line(self.file.path, self.lines + i + 1, why))
        self.lines += len(lines)
        return events


def skipped_line(path: Path, number: int, why: str) -> str:
    """The note on a line of ``path`` that did not read."""
    return f"{path.name} line {number}: {why}; skipped"


#: How many files :func:`followed_events` keeps (the runs a user looks at in turn), and
#: how many events in all: a slotted logged step is about 300 bytes, so a run of 300,000
#: steps is about 90 MB kept.
KEPT_LOGS = 8
KEPT_EVENTS = 1_000_000


class EventLog:
    """A ``metrics.jsonl``'s events as of the last look, and how to read what comes next.

    ``events`` grows in place (CPython lists are safe to read while another thread
    extends them); what one look saw, with its count and restarts, comes from
    :meth:`look`, taken under the log's own lock.
    """

    def __init__(self, path: Path) -> None:
        self.follower = MetricsFollower(path)
        self.events: list[Event] = []
        self.stamp: Stamp = None  # the file's stamp at the last look (None: not there)
        self.restarts = 0  # times the file was replaced or truncated: events started over
        self.lock = threading.Lock()

    def look(self) -> tuple[list[Event], int, int]:
        """Read the lines added since the last look, unless the file's stamp is the same;
        the events, how many there were as of this look, and the restarts."""
        with self.lock:
            stamp = file_stamp(self.follower.file.path)
            if stamp != self.stamp or stamp is None:
                self.stamp = stamp
                restarts = self.follower.file.restarts
                new = self.follower.read_new()
                if self.follower.file.restarts != restarts:
                    self.events, self.restarts = new, self.restarts + 1
                else:
                    self.events.extend(new)
            return self.events, len(self.events), self.restarts


_LOGS: OrderedDict[Path, EventLog] = OrderedDict()
_LOGS_LOCK = threading.Lock()  # the TUI looks from its main thread and from workers


def followed_events(path: Path) -> EventLog:
    """The log of the ``metrics.jsonl`` at ``path``, looked at now: read once per process
    and then followed (see the module's docstring). Its ``events`` are shared: read them,
    never change them. A file is parsed under its own log's lock only, so a worker
    reading a long run never holds up a look at another."""
    key = path.absolute()
    with _LOGS_LOCK:
        log = _LOGS.pop(key, None) or EventLog(path)
        _LOGS[key] = log  # the newest look last; the oldest goes first
    log.look()
    with _LOGS_LOCK:
        kept = sum(len(other.events) for other in _LOGS.values())
        while len(_LOGS) > 1 and (len(_LOGS) > KEPT_LOGS or kept > KEPT_EVENTS):
            _, oldest = _LOGS.popitem(last=False)
            kept -= len(oldest.events)
    return log


@dataclass(frozen=True)
class Look:
    """What one look at a followed run found: the lines and events it wrote since the last
    look, and its status now."""

    lines: list[str]
    events: Sequence[Event]
    live: Liveness

    @property
    def ended(self) -> bool:
        """Whether its writer is gone: the look read its last lines, and no more come."""
        return not self.live.live


class RunReader:
    """A run folder as it grows: the new lines of its ``train.log`` (what the run said)
    and the new events of its ``metrics.jsonl`` (its numbers), since the last read.

    It keeps the :class:`EventLog` it was given first, so its place in the events holds
    even when the shared cache lets that log go. With ``events=False`` it reads the lines
    only (``workbench logs``), and a long run's ``metrics.jsonl`` is never parsed."""

    def __init__(self, run_dir: Path, events: bool = True) -> None:
        self.run_dir = run_dir
        self.log = GrowingFile(RunFolder(run_dir).log)
        self.metrics = RunFolder(run_dir).metrics
        self.reads_events = events
        self.events: EventLog | None = None
        self._read: tuple[int, int] = (-1, 0)  # (restarts, events) of the last read

    def has_log(self) -> bool:
        """Whether the run folder holds a ``train.log``: a try that failed before its
        first line, or a folder no writer has held yet, has none."""
        return self.log.path.is_file()

    def read_new(self) -> tuple[list[str], Sequence[Event]]:
        """The log lines and the events added since the last call (all, the first time)."""
        if not self.reads_events:
            return self.log.read_new_text(), []
        if self.events is None:
            self.events = followed_events(self.metrics)
        events, count, restarts = self.events.look()
        seen_restarts, seen = self._read
        new = events[seen:count] if restarts == seen_restarts else events[:count]
        self._read = (restarts, count)
        return self.log.read_new_text(), new

    def look(self) -> Look:
        """What the run wrote since the last look, and its status; once its writer is
        gone, the lines it wrote as it ended too (they come after the status is read)."""
        lines, events = self.read_new()
        live = run_liveness(self.run_dir)
        if not live.live:
            last_lines, last_events = self.read_new()
            lines, events = [*lines, *last_lines], [*events, *last_events]
        return Look(lines, events, live)
