"""Typed progress events: the one channel from the core to any front end.

Training code calls a sink (``Callable[[Event], None]``) with these small frozen
dataclasses; the headless sink prints them, the TUI posts them as messages, and
:class:`JsonlRecorder` writes the numeric ones to ``metrics.jsonl``. Sinks may be called
from a worker thread, so they must not touch UI state directly. :class:`EventText` is the
one wording of events as lines, for the headless output and the TUI's log alike.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from workbench.core.run_folder import RunSummary
from workbench.core.scores import MISSING, headline, interval_line

PhaseName = Literal["data", "model", "before", "train", "after"]
Level = Literal["info", "warning", "error"]
Stage = Literal["epoch", "before", "after"]
Split = Literal["validation", "test"]
Status = Literal["finished", "stopped", "failed"]



@dataclass(frozen=True)
class Phase:
    """A stage of the run begins (``data``, ``model``, ``before``, ``train``, ``after``)."""

    name: PhaseName
    detail: str = ""


@dataclass(frozen=True)
class Note:
    """A human-readable line: information or a warning."""

    text: str
    level: Level = "info"


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
    stage: Stage = "epoch"
    split: Split = "validation"  # per-epoch evaluations are always of validation
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

    status: Status
    run_dir: str
    summary: RunSummary = field(default_factory=RunSummary)


Event = Phase | Note | TrainStep | EvalDone | Sample | RunDone
EventSink = Callable[[Event], None]


def format_seconds(seconds: float | None) -> str:
    """``1h02m03s`` / ``4m05s`` / ``7s``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def event_to_record(event: Event) -> dict[str, Any]:
    """A JSON-ready dict with the event type and a wall-clock timestamp."""
    record = {"event": type(event).__name__, "time": round(time.time(), 3)}
    record.update(dataclasses.asdict(event))
    if isinstance(event, RunDone):  # as in summary.json: missing values left out
        record["summary"] = event.summary.to_dict()
    return record


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
    if cls is RunDone and isinstance(fields.get("summary"), dict):
        fields["summary"] = RunSummary.from_dict(fields["summary"])
    return cls(**fields)


def read_events(path: Path) -> list[Event]:
    """Every event recorded in a ``metrics.jsonl`` file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [event_from_record(json.loads(line)) for line in lines if line.strip()]


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


def _num(value: float | None, fmt: str, missing: str = MISSING) -> str:
    return missing if value is None else format(value, fmt)


#: What each set is for, said under its scores at the end of a run.
SET_ROLES = (("test", "hand this in: never used to choose anything"),
             ("validation", "chose the best epoch, so optimistic"))


class EventText:
    """Events as plain lines: the one wording for ``train --headless`` and the TUI's log.

    Remembers each set's "before" scores to print the change next to "after", and numbers
    the samples as they come.
    """

    def __init__(self) -> None:
        #: BLEU and chrF before fine-tuning, per set ("validation", "test").
        self.before: dict[str, tuple[float, float]] = {}
        self.samples_seen = 0

    def lines(self, event: Event) -> list[str]:
        """The lines that say what ``event`` means (none for an event with nothing to say)."""
        if isinstance(event, Phase):
            return [f"[{event.name}]" + (f" {event.detail}" if event.detail else "")]
        if isinstance(event, Note):
            prefix = {"warning": "warning: ", "error": "error: "}.get(event.level, "")
            return [f"  {prefix}{event.text}"]
        if isinstance(event, TrainStep):
            total = event.max_steps or 0
            return [f"  step {event.step:>{len(str(total))}}/{total}  epoch {event.epoch:5.2f}  "
                    # A logged loss is missing only when it was NaN or infinite.
                    f"loss {_num(event.loss, '.4f', 'nan/inf')}  "
                    f"lr {_num(event.learning_rate, '.2e')}  "
                    f"grad {_num(event.grad_norm, '.2f')}  "
                    f"{_num(event.samples_per_second, '.1f')} samples/s  "
                    f"ETA {format_seconds(event.eta_seconds)}"]
        if isinstance(event, EvalDone):
            return [self._eval(event)]
        if isinstance(event, Sample):
            return self._sample(event)
        return self._done(event)

    def _eval(self, event: EvalDone) -> str:
        where = f"{event.split} ({event.set_name}, {event.size:,})"
        if event.stage == "before":
            self.before[event.split] = (event.bleu, event.chrf)
            return (f"  before fine-tuning, {where}: BLEU {event.bleu:.2f}   "
                    f"chrF {event.chrf:.2f}")
        if event.stage == "after":
            bleu0, chrf0 = self.before.get(event.split, (None, None))
            diff = "" if bleu0 is None else f" ({event.bleu - bleu0:+.2f})"
            cdiff = "" if chrf0 is None else f" ({event.chrf - chrf0:+.2f})"
            return (f"  after fine-tuning,  {where}: BLEU {event.bleu:.2f}{diff}   "
                    f"chrF {event.chrf:.2f}{cdiff}")
        return (f"  epoch {event.epoch:.0f} done: BLEU {event.bleu:.2f}  "
                f"chrF {event.chrf:.2f}  eval loss {_num(event.loss, '.4f')}  (validation)")

    def _sample(self, event: Sample) -> list[str]:
        lines = [] if self.samples_seen else ["[samples] before / after on test sentences"]
        self.samples_seen += 1
        return [*lines,
                f"  {self.samples_seen}. source:    {event.source}",
                f"     reference: {event.reference}",
                f"     before:    {event.before}   (BLEU {event.bleu_before:.1f})",
                f"     after:     {event.after}   (BLEU {event.bleu_after:.1f})"]

    def _done(self, event: RunDone) -> list[str]:
        s = event.summary
        if event.status != "finished":
            return [f"[{event.status}] run folder: {event.run_dir}"]
        lines = ["[done]"]
        for role, note in SET_ROLES:
            scores = s.scores(role)
            if scores is not None:
                lines += [f"  {headline(scores)}", f"    {interval_line(scores)}; {note}"]
        if s.test is None:  # an older run's numbers, or the dash, never a made-up 0.00
            missing = f"test: BLEU {MISSING} · chrF {MISSING} (not in the summary)"
            lines.append(f"  {s.legacy_line() or missing}")
        seconds = MISSING if s.train_seconds is None else format_seconds(s.train_seconds)
        return [*lines,
                f"  training {seconds}; best model: {s.best_model or MISSING}",
                f"  run folder: {event.run_dir} (config.json, metrics.jsonl, summary.json)"]
