"""Typed progress events: the one channel from the core to any front end.

Training code calls a sink (``Callable[[Event], None]``) with these small frozen
dataclasses; the headless sink prints them, the TUI posts them as messages, and
:class:`JsonlRecorder` writes the numeric ones to ``metrics.jsonl``. Sinks may be called
from a worker thread, so they must not touch UI state directly. Their one wording as
lines, for the headless output and the TUI's log alike, is
:class:`workbench.core.views.event_text.EventText`.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from workbench.core.records.files import records_from_end
from workbench.core.records.run_records import Sample
from workbench.core.records.scores import finite_or_none
from workbench.core.records.status import EndStatus
from workbench.core.records.summary import RunSummary
from workbench.core.records.typed import decode

PhaseName = Literal["data", "model", "before", "rank", "train", "after", "comet", "metricx", "pick"]
Level = Literal["info", "warning", "error"]
Stage = Literal["epoch", "before", "after"]
Split = Literal["validation", "test"]


@dataclass(frozen=True, slots=True)
class Phase:
    """A stage of the run begins (``data``, ``model``, ``before``, ``train``, ``after``,
    ``comet``, ``metricx``, ``pick``)."""

    name: PhaseName
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Note:
    """A human-readable line: information or a warning."""

    text: str
    level: Level = "info"


@dataclass(frozen=True, slots=True)
class TrainStep:
    """One logging step of the optimizer."""

    step: int
    max_steps: int
    epoch: float
    loss: float | None
    learning_rate: float | None
    grad_norm: float | None
    samples_per_second: float | None
    eta_seconds: float | None


@dataclass(frozen=True, slots=True)
class EvalDone:
    """An evaluation: of the validation set per epoch, or of either set before/after."""

    step: int
    epoch: float
    bleu: float
    chrf: float
    loss: float | None = None
    stage: Stage = "epoch"
    split: Split = "validation"  # per-epoch evaluations are always of validation
    set_name: str = ""  # where the set comes from, e.g. "newstest2018"
    size: int = 0  # sentences scored
    #: The model's authors' BLEU on this set, and the release it belongs to ("before" only).
    published_bleu: float | None = None
    published_source: str = ""
    #: The validation set's COMET (×100) of an epoch, when it chooses the best one.
    comet: float | None = None


@dataclass(frozen=True, slots=True)
class RunDone:
    """The run ended; ``status`` is ``finished``, ``stopped`` or ``failed``."""

    status: EndStatus
    run_dir: str
    summary: RunSummary = field(default_factory=RunSummary)


@dataclass(frozen=True, slots=True)
class SampleProgress:
    """Row groups of a Hub data sample in hand so far, of those it needs, and their bytes
    (``kept``: found in the partial cache an interrupted earlier try left)."""

    row_groups: int
    row_groups_total: int
    bytes: int
    bytes_total: int
    kept: int = 0


@dataclass(frozen=True, slots=True)
class DataProgress:
    """Preparing a corpus: ``done`` of ``total`` pairs through ``stage`` (``reading``,
    ``cleaning``, ``cleaning and tokenizing``, ``writing``; ``total`` 0 while a file is
    read and its size in pairs is not known yet), at ``pairs_per_second``."""

    stage: str
    done: int
    total: int
    pairs_per_second: float
    eta_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class ScoreProgress:
    """A neural metric (COMET) encoding sentences: ``done`` of ``total`` sequences, at
    ``per_second``."""

    metric: str  # "COMET-22"
    done: int
    total: int
    per_second: float
    eta_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class PreferenceProgress:
    """Ranking training sources for ``--objective best|cpo|dpo``: ``done`` of ``total``
    sources through ``stage`` (``ranking``: candidates generated and scored), at
    ``per_second`` (this build's own sources, not those an earlier build left)."""

    stage: str
    done: int
    total: int
    per_second: float
    eta_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class HubRetry:
    """A Hub request failed in a way that usually passes (HTTP 429 or 5xx, a dropped
    connection, a read timeout) and is tried again after ``wait_seconds``."""

    url: str
    reason: str  # "HTTP 503", "connection dropped (RemoteProtocolError: ...)"
    attempt: int  # the try that failed, from 1
    tries: int  # the most tries a request gets
    wait_seconds: float


Event = (
    Phase
    | Note
    | TrainStep
    | EvalDone
    | Sample
    | RunDone
    | SampleProgress
    | DataProgress
    | ScoreProgress
    | PreferenceProgress
    | HubRetry
)
EventSink = Callable[[Event], None]


def event_to_record(event: Event) -> dict[str, Any]:
    """A JSON-ready dict with the event type and a wall-clock timestamp."""
    record = {"event": type(event).__name__, "time": round(time.time(), 3)}
    record.update(dataclasses.asdict(event))
    if isinstance(event, RunDone):  # as in summary.json: missing values left out
        record["summary"] = event.summary.to_dict()
    return record


#: Event classes by the name the recorder writes in the ``event`` field.
EVENT_TYPES: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        Phase,
        Note,
        TrainStep,
        EvalDone,
        Sample,
        RunDone,
        SampleProgress,
        DataProgress,
        ScoreProgress,
        PreferenceProgress,
        HubRetry,
    )
}


#: Each event class's field names, by its ``event`` name: a long run's log holds hundreds of
#: thousands of records, and asking ``dataclasses.fields`` per record cost a third of a read.
_FIELD_NAMES: dict[str, frozenset[str]] = {
    name: frozenset(f.name for f in dataclasses.fields(cls)) for name, cls in EVENT_TYPES.items()
}


def event_from_record(record: dict[str, Any]) -> Event:
    """The event a ``metrics.jsonl`` record was written from (its ``time`` is dropped).

    Unknown fields raise ``TypeError`` instead of being skipped: a record that no longer
    fits its class means the recorded fixture is out of date, and a replay should say so.
    """
    fields = dict(record)
    fields.pop("time", None)
    return _event(fields)


def timed_event_from_record(record: dict[str, Any]) -> tuple[Event, float | None]:
    """:func:`event_from_record`, and the Unix time the record was written (None where it
    holds none)."""
    fields = dict(record)
    written = fields.pop("time", None)
    return _event(fields), finite_or_none(written)


def _event(fields: dict[str, Any]) -> Event:
    name = fields.pop("event")
    cls = EVENT_TYPES.get(name)
    if cls is None:
        raise ValueError(f"unknown event {name!r} in a metrics record")
    unknown = fields.keys() - _FIELD_NAMES[name]
    if unknown:
        raise TypeError(f"{name} record has fields {sorted(unknown)} the event does not")
    if cls is RunDone:  # the one event with a record inside it: the one decoder reads it
        said: list[str] = []
        done = decode(RunDone, fields, said, name)
        if done is None:
            raise ValueError("; ".join(said))
        return done
    return cls(**fields)


class JsonlRecorder:
    """Append numeric events to a JSONL file as they happen (flushed per line)."""

    KINDS = (TrainStep, EvalDone, RunDone, Phase)

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # A killed writer can leave a torn last line: end it, so that this writer's first
        # record is a line of its own and not glued to the torn one.
        with path.open("ab") as fh:
            if fh.tell() and _last_byte(path) != b"\n":
                fh.write(b"\n")

    def __call__(self, event: Event) -> None:
        """Append ``event`` as one JSON line if it is of :data:`KINDS`, the numbers a run keeps."""
        if not isinstance(event, self.KINDS):
            return
        line = json.dumps(event_to_record(event), ensure_ascii=False, allow_nan=False, default=str)
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as fh:
        fh.seek(-1, 2)
        return fh.read(1)


def fan_out(*sinks: EventSink | None) -> EventSink:
    """One sink that forwards each event to every given sink, in order."""
    active = [s for s in sinks if s is not None]

    def sink(event: Event) -> None:
        for s in active:
            s(event)

    return sink


def events_from_end(path: Path) -> Iterator[tuple[Event, float | None]]:
    """The events of a ``metrics.jsonl`` from its last line to its first, each with the
    Unix time it was written: how a run ended, or its last step, in a block or two of a
    log of 300,000 steps. A line that does not read as an event is skipped."""
    for record in records_from_end(path):
        try:
            yield timed_event_from_record(record)
        except (ValueError, TypeError, KeyError):
            continue  # a torn or hand-edited line, or an event of another version
