"""What a run's events draw on the Training pane, and a recorded run drawn at once
(workbench.tui.run_drawing)."""

from __future__ import annotations

from workbench.core.events import DataProgress, EvalDone, Event, Note, Phase, TrainStep
from workbench.tui.run_drawing import LOSS_CHART, SCORES_CHART, Marks, last_drawn, marks


def step(n: int) -> TrainStep:
    return TrainStep(n, 100, n / 10, 5.0 - n / 100, 1e-4, 1.0, 10.0, 9.0)


def test_a_replay_draws_only_the_events_the_status_and_the_bar_end_on():
    evaluation = EvalDone(step=2, epoch=1.0, bleu=3.0, chrf=4.0)
    events: list[Event] = [Phase("train"), step(1), step(2), evaluation, Phase("after")]
    assert last_drawn(events) == [step(2), Phase("after")]
    assert last_drawn([Phase("train"), step(1), evaluation]) == [step(1)]
    assert last_drawn([evaluation]) == []


def test_each_event_sets_what_it_is_about():
    drawn = marks(step(7))
    assert drawn.status == "step 7/100 · epoch 0.70 · 10.0 samples/s · ETA 9s"
    assert drawn.progress == (7, 100)
    assert [(p.chart, p.series, p.x, p.y) for p in drawn.points] == [
        (LOSS_CHART, "loss", 7, step(7).loss)
    ]
    validation = marks(EvalDone(step=2, epoch=1.0, bleu=3.0, chrf=4.0))
    assert validation.status is None
    assert validation.progress is None
    assert [(p.chart, p.series, p.x, p.y) for p in validation.points] == [
        (SCORES_CHART, "BLEU", 1.0, 3.0),
        (SCORES_CHART, "chrF", 1.0, 4.0),
    ]
    # The test set is scored before and after only: no point on the per-epoch chart.
    assert marks(EvalDone(step=2, epoch=1.0, bleu=3.0, chrf=4.0, split="test")).points == ()
    data = marks(DataProgress("cleaning", 40, 1000, 500.0))
    assert data == Marks(status="data: cleaning 40/1,000 pairs · 500 pairs/s · ETA ?",
                         progress=(40, 1000))  # fmt: skip
    assert marks(DataProgress("reading", 40, 0, 500.0)).progress == (40, 0)  # size unknown
    assert marks(Phase("after")) == Marks(status="after")
    assert marks(Note("a note")) == Marks()  # its line is the log's; it sets no widget
