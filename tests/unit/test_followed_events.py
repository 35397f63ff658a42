"""A metrics.jsonl the TUI looks at again and again is read once, then from its last
offset (workbench.core.live.follow.followed_events, RunReader)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from workbench.core.events import EvalDone, Event, JsonlRecorder, Phase, TrainStep
from workbench.core.live.follow import RunReader, followed_events
from workbench.tui.widgets.replay import last_drawn


def step(n: int) -> TrainStep:
    return TrainStep(n, 100, n / 10, 5.0 - n / 100, 1e-4, 1.0, 10.0, 9.0)


def test_a_log_is_read_once_while_its_stamp_stays_and_followed_as_it_grows(tmp_path: Path):
    path = tmp_path / "metrics.jsonl"
    recorder = JsonlRecorder(path)
    for n in (1, 2):
        recorder(step(n))
    log = followed_events(path)
    assert log.events == [step(1), step(2)]
    # Other bytes of the same size and modification time: not read again.
    stat = path.stat()
    path.write_bytes(path.read_bytes().replace(b'"step": 2,', b'"step": 7,'))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert followed_events(path).events == [step(1), step(2)]
    # Grown: only the new line is read, after the kept ones.
    recorder(step(3))
    assert followed_events(path) is log
    assert log.events == [step(1), step(2), step(3)]
    assert log.restarts == 0
    # Replaced by another file: read from its start.
    path.unlink()
    path.write_text(json.dumps({"event": "Phase", "name": "data", "detail": ""}) + "\n")
    assert followed_events(path).events == [Phase("data")]
    assert log.restarts == 1
    assert followed_events(tmp_path / "missing.jsonl").events == []


def test_a_run_reader_gives_each_event_once_even_across_a_replaced_log(tmp_path: Path):
    path = tmp_path / "metrics.jsonl"
    recorder = JsonlRecorder(path)
    recorder(step(1))
    followed_events(path)  # another pane read it first
    reader = RunReader(tmp_path)
    assert reader.read_new() == ([], [step(1)])
    recorder(step(2))
    assert reader.read_new() == ([], [step(2)])
    assert reader.read_new() == ([], [])
    path.unlink()
    JsonlRecorder(path)(Phase("after"))
    assert reader.read_new() == ([], [Phase("after")])


def test_a_replay_draws_only_the_events_the_status_and_the_bar_end_on():
    evaluation = EvalDone(step=2, epoch=1.0, bleu=3.0, chrf=4.0)
    events: list[Event] = [Phase("train"), step(1), step(2), evaluation, Phase("after")]
    assert last_drawn(events) == [step(2), Phase("after")]
    assert last_drawn([Phase("train"), step(1), evaluation]) == [step(1)]
    assert last_drawn([evaluation]) == []
