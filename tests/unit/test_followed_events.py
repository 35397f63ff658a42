"""A metrics.jsonl the TUI looks at again and again is read once, then from its last
offset (workbench.core.live.follow.followed_events, RunReader)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from workbench.core.events import JsonlRecorder, Phase, TrainStep
from workbench.core.live import follow
from workbench.core.live.follow import RunReader, followed_events


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


def test_the_kept_logs_are_bounded_and_a_reader_keeps_its_place_when_one_goes(
    tmp_path: Path, monkeypatch
):
    """At most KEPT_EVENTS events are kept across the logs (the newest look always); a
    RunReader holds its own log, so a log the cache let go is not read twice."""
    monkeypatch.setattr(follow, "KEPT_EVENTS", 5)
    paths = [tmp_path / f"run{n}" / "metrics.jsonl" for n in range(3)]
    for path in paths:
        path.parent.mkdir()
        recorder = JsonlRecorder(path)
        for n in (1, 2, 3):
            recorder(step(n))
    reader = RunReader(paths[0].parent)
    assert reader.read_new() == ([], [step(1), step(2), step(3)])
    first = followed_events(paths[0])
    followed_events(paths[1])  # 6 events kept: the oldest log goes
    assert followed_events(paths[0]) is not first  # read again, as a new log
    JsonlRecorder(paths[0])(step(4))
    assert reader.read_new() == ([], [step(4)])
    followed_events(paths[2])
    assert len(follow._LOGS) == 1  # every look holds 3 events, only one log fits
