"""Turn a run's ``metrics.jsonl`` back into core events, to replay a recorded run in the TUI.

:class:`workbench.core.events.JsonlRecorder` writes each event as its dataclass fields plus
``event`` (the class name) and ``time``; this reads them back, so that a test can post a
real run's events to the Training pane exactly as the training worker would. It lives
with the tests for now; its natural home is next to the recorder in ``core/events.py``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from workbench.core.events import EvalDone, Event, Note, Phase, RunDone, Sample, TrainStep

#: Event classes by the name the recorder writes in the ``event`` field.
EVENT_TYPES: dict[str, type[Any]] = {
    cls.__name__: cls for cls in (Phase, Note, TrainStep, EvalDone, Sample, RunDone)
}


def event_from_record(record: dict[str, Any]) -> Event:
    """The event a ``metrics.jsonl`` record was written from (its ``time`` is dropped).

    Unknown fields raise ``TypeError`` instead of being skipped: a record that no longer
    fits its class means the recorded fixture is out of date, and a replay should say so.
    """
    fields = dict(record)
    name = fields.pop("event")
    fields.pop("time", None)
    cls = EVENT_TYPES.get(name)
    if cls is None:
        raise ValueError(f"unknown event {name!r} in a metrics record")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = set(fields) - known
    if unknown:
        raise TypeError(f"{name} record has fields {sorted(unknown)} the event does not")
    return cls(**fields)


def read_events(path: Path) -> list[Event]:
    """Every event recorded in a ``metrics.jsonl`` file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [event_from_record(json.loads(line)) for line in lines if line.strip()]
