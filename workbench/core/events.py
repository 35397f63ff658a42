"""Typed progress events: the one channel from the core to any front end.

Training code calls a sink (``Callable[[Event], None]``) with these small frozen
dataclasses; the headless sink prints them, the TUI posts them as messages, and
:class:`JsonlRecorder` writes the numeric ones to ``metrics.jsonl``. Sinks may be called
from a worker thread, so they must not touch UI state directly.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.runs import RunSummary


@dataclass(frozen=True)
class Phase:
    """A stage of the run begins (``data``, ``model``, ``before``, ``train``, ``after``)."""

    name: str
    detail: str = ""


@dataclass(frozen=True)
class Note:
    """A human-readable line: information or a warning."""

    text: str
    level: str = "info"


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class EvalDone:
    """An evaluation: of the validation set per epoch, or of either set before/after."""

    step: int
    epoch: float
    bleu: float
    chrf: float
    loss: float | None = None
    stage: str = "epoch"  # "epoch", "before" or "after"
    split: str = "validation"  # "validation" or "test"; per-epoch ones are validation
    set_name: str = ""  # where the set comes from, e.g. "newstest2018"
    size: int = 0  # sentences scored


@dataclass(frozen=True)
class Sample:
    """One before/after translation of a test-set source."""

    source: str
    reference: str
    before: str
    after: str
    bleu_before: float
    bleu_after: float


@dataclass(frozen=True)
class RunDone:
    """The run ended; ``status`` is ``finished``, ``stopped`` or ``failed``."""

    status: str
    run_dir: str
    summary: RunSummary = field(default_factory=RunSummary)


Event = Phase | Note | TrainStep | EvalDone | Sample | RunDone
EventSink = Callable[[Event], None]


def finite_or_none(value: Any) -> float | None:
    """A float when ``value`` is a finite number, else None (keeps NaN out of JSON/plots)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def event_to_record(event: Event) -> dict[str, Any]:
    """A JSON-ready dict with the event type and a wall-clock timestamp."""
    record = {"event": type(event).__name__, "time": round(time.time(), 3)}
    record.update(dataclasses.asdict(event))
    if isinstance(event, RunDone):  # as in summary.json: missing values left out
        record["summary"] = event.summary.to_dict()
    return record


class JsonlRecorder:
    """Append numeric events to a JSONL file as they happen (flushed per line)."""

    KINDS = (TrainStep, EvalDone, RunDone, Phase)

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        if not isinstance(event, self.KINDS):
            return
        line = json.dumps(event_to_record(event), ensure_ascii=False, allow_nan=False,
                          default=str)
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def fan_out(*sinks: EventSink | None) -> EventSink:
    """One sink that forwards each event to every given sink, in order."""
    active = [s for s in sinks if s is not None]

    def sink(event: Event) -> None:
        for s in active:
            s(event)

    return sink
