"""A recorded run drawn at once: its chart series, and the few events the Training pane's
status line and progress bar end on.

Replaying a run event by event redrew the status line and the progress bar once per
logged step: a run of 300,000 steps kept the pane busy for minutes. Only the last event
that sets each widget decides what it shows, so only those are drawn.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.core.events import (
    DataProgress,
    EvalDone,
    Event,
    Phase,
    RunDone,
    SampleProgress,
    ScoreProgress,
    TrainStep,
)

Series = dict[str, list[tuple[float, float]]]
#: Events that set the progress bar, and those that set the status line.
SETS_BAR = (SampleProgress, DataProgress, ScoreProgress, TrainStep)
SETS_STATUS = (Phase, RunDone, *SETS_BAR)


def charted(e: EvalDone) -> bool:
    """Whether the BLEU chart shows this evaluation: it follows the validation set, as the
    test set is scored before and after only."""
    return e.stage in ("before", "epoch") and e.split == "validation"


def replayed_series(events: Sequence[Event]) -> tuple[Series, Series]:
    """A run's recorded events as the loss chart's and the BLEU chart's series."""
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
    last = {
        kinds: next((i for i in reversed(range(len(events))) if isinstance(events[i], kinds)), None)
        for kinds in (SETS_BAR, SETS_STATUS)
    }
    return [events[i] for i in sorted({i for i in last.values() if i is not None})]
