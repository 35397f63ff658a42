"""A run's events as the Training pane draws them: what one event sets (its status line,
its progress bar, its charts' points), and a recorded run drawn at once.

Which events set which widget is said once, in :func:`marks`: a live event is drawn by
it, and a replay draws only the last event that sets each widget. Replaying a run event
by event redrew the status line and the progress bar once per logged step, and a run of
300,000 steps kept the pane busy for minutes; only the last event that sets a widget
decides what it shows. Plain data, no Textual: the pane draws it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.core.events import (
    DataProgress,
    EvalDone,
    Event,
    Phase,
    PreferenceProgress,
    RunDone,
    SampleProgress,
    ScoreProgress,
    TrainStep,
)
from workbench.core.views.event_text import data_status
from workbench.core.views.numbers import format_seconds

Series = dict[str, list[tuple[float, float]]]
#: The charts a point goes to: the loss per step, and BLEU and chrF per epoch.
LOSS_CHART, SCORES_CHART = "loss", "bleu"


@dataclass(frozen=True)
class Point:
    """A new point of one series of one chart."""

    chart: str
    series: str
    x: float
    y: float | None


@dataclass(frozen=True)
class Marks:
    """What one event sets on the Training pane; None leaves a widget as it is."""

    status: str | None = None
    #: (done, total) for the progress bar; a total of 0 is not known yet (indeterminate).
    progress: tuple[float, float] | None = None
    points: tuple[Point, ...] = ()


def charted(e: EvalDone) -> bool:
    """Whether the BLEU chart shows this evaluation: it follows the validation set, as the
    test set is scored before and after only."""
    return e.stage in ("before", "epoch") and e.split == "validation"


def marks(event: Event) -> Marks:
    """What ``event`` sets: the phase or the end in the status line; data, scoring and
    training steps in the status line and the bar; losses and validation scores as points."""
    if isinstance(event, Phase):
        return Marks(status=event.name)
    if isinstance(event, SampleProgress | DataProgress | ScoreProgress | PreferenceProgress):
        done, total, status = data_status(event)
        return Marks(status=status, progress=(done, total))
    if isinstance(event, TrainStep):
        status = (
            f"step {event.step}/{event.max_steps} · epoch {event.epoch:.2f} · "
            f"{(event.samples_per_second or 0):.1f} samples/s · "
            f"ETA {format_seconds(event.eta_seconds)}"
        )
        loss = Point(LOSS_CHART, "loss", event.step, event.loss)
        return Marks(status=status, progress=(event.step, event.max_steps), points=(loss,))
    if isinstance(event, EvalDone) and charted(event):
        bleu = Point(SCORES_CHART, "BLEU", event.epoch, event.bleu)
        return Marks(points=(bleu, Point(SCORES_CHART, "chrF", event.epoch, event.chrf)))
    if isinstance(event, RunDone):
        return Marks(status=event.status)
    return Marks()


def replayed_series(events: Sequence[Event]) -> tuple[Series, Series]:
    """A run's recorded events as the loss chart's and the BLEU chart's series (each point
    that :func:`marks` gives, gathered without building the status lines)."""
    loss: list[tuple[float, float]] = []
    bleu: list[tuple[float, float]] = []
    chrf: list[tuple[float, float]] = []
    for event in events:
        if isinstance(event, TrainStep) and event.loss is not None:
            loss.append((float(event.step), event.loss))
        elif isinstance(event, EvalDone) and charted(event):
            bleu += [(event.epoch, event.bleu)] if event.bleu is not None else []
            chrf += [(event.epoch, event.chrf)] if event.chrf is not None else []
    return {"loss": loss}, {"BLEU": bleu, "chrF": chrf}


def last_drawn(events: Sequence[Event]) -> list[Event]:
    """The last event that sets the status line and the last that sets the progress bar,
    in the order they came: drawing just these leaves both as drawing all would."""
    status = bar = None
    for i in reversed(range(len(events))):
        if status is not None and bar is not None:
            break
        drawn = marks(events[i])
        if status is None and drawn.status is not None:
            status = i
        if bar is None and drawn.progress is not None:
            bar = i
    return [events[i] for i in sorted({i for i in (status, bar) if i is not None})]
