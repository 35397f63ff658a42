"""A recorded run drawn at once (workbench.tui.widgets.replay)."""

from __future__ import annotations

from workbench.core.events import EvalDone, Event, Phase, TrainStep
from workbench.tui.widgets.replay import last_drawn


def step(n: int) -> TrainStep:
    return TrainStep(n, 100, n / 10, 5.0 - n / 100, 1e-4, 1.0, 10.0, 9.0)


def test_a_replay_draws_only_the_events_the_status_and_the_bar_end_on():
    evaluation = EvalDone(step=2, epoch=1.0, bleu=3.0, chrf=4.0)
    events: list[Event] = [Phase("train"), step(1), step(2), evaluation, Phase("after")]
    assert last_drawn(events) == [step(2), Phase("after")]
    assert last_drawn([Phase("train"), step(1), evaluation]) == [step(1)]
    assert last_drawn([evaluation]) == []
