"""A whole metrics.jsonl read for a run's figures: logged steps as columns, other events as
themselves, and each line that does not read skipped with the reason the event reader gives
(workbench.core.live.run_metrics)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from workbench.core.events import EvalDone, JsonlRecorder, Phase, TrainStep
from workbench.core.live import follow, run_metrics
from workbench.core.live.follow import NOT_JSON, MetricsFollower
from workbench.core.live.run_metrics import LoggedSteps, read_run_metrics


def step(n: int, loss: float | None = None, epoch: float | None = None) -> TrainStep:
    return TrainStep(n, 100, n / 10 if epoch is None else epoch, loss, 1e-4, 1.0, 10.0, 9.0)


def awkward_log(path: Path) -> None:
    """Steps, a resume that logs steps 2 and 3 again, and every kind of line that does not
    read: torn JSON, an unknown event, a step with a field the event lacks, a step numbered
    with a string; blank lines; a last line still being written."""
    recorder = JsonlRecorder(path)
    recorder(Phase("train"))
    for n, loss in ((1, 5.0), (2, 4.0), (3, None)):
        recorder(step(n, loss))
    recorder(EvalDone(3, 0.3, 1.5, 10.0))
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"event": "TrainStep", "time": 1.0, "step": 4, "max_st\n')  # torn
        fh.write("\n")
        fh.write(json.dumps({"event": "Mystery", "time": 1.0}) + "\n")
        record = {"event": "TrainStep", "time": 1.0, **vars_of(step(5, 1.0)), "extra": 1}
        fh.write(json.dumps(record) + "\n")
        fh.write(json.dumps({"event": "TrainStep", **vars_of(step(6, 0.5))}) + "\n")  # no time
        record = {"event": "TrainStep", "time": 1.0, **vars_of(step(7, 0.5)), "step": "7"}
        fh.write(json.dumps(record) + "\n")
        record = {"event": "TrainStep", "time": 1.0, **vars_of(step(8, 0.5)), "loss": "high"}
        fh.write(json.dumps(record) + "\n")
        record = {"event": "TrainStep", "time": 1.0, **vars_of(step(9, 0.5)), "step": 2**63}
        fh.write(json.dumps(record) + "\n")
        record = {"event": "TrainStep", "time": 1.0, **vars_of(step(10)), "loss": "1.5"}
        fh.write(json.dumps(record) + "\n")
    for n, loss in ((2, 3.0), (3, 2.0)):  # resumed from step 1
        recorder(step(n, loss))
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"event": "TrainStep", "time"')  # being written


def vars_of(event: TrainStep) -> dict[str, object]:
    return {name: getattr(event, name) for name in TrainStep.__dataclass_fields__}


@pytest.mark.parametrize("small_blocks", [False, True])
def test_steps_become_columns_and_other_lines_read_as_the_event_reader_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_blocks: bool
):
    path = tmp_path / "metrics.jsonl"
    awkward_log(path)
    if small_blocks:  # blocks of lines, and JSON arrays, that end inside the awkward lines
        monkeypatch.setattr(run_metrics, "BLOCK_BYTES", 300)
        monkeypatch.setattr(follow, "DECODE_BLOCK", 3)
    notes: list[str] = []
    metrics = read_run_metrics(path, notes)
    event_notes: list[str] = []
    events = MetricsFollower(path, event_notes).read_new()

    assert metrics.events == [e for e in events if not isinstance(e, TrainStep)]
    assert metrics.events == [Phase("train"), EvalDone(3, 0.3, 1.5, 10.0)]
    assert metrics.steps.step.tolist() == [1, 2, 3, 6, 8, 10, 2, 3]
    assert metrics.steps.step.dtype == np.int64
    assert metrics.steps.epoch.tolist() == pytest.approx([0.1, 0.2, 0.3, 0.6, 0.8, 1.0, 0.2, 0.3])
    losses = metrics.steps.loss.tolist()
    assert losses[:2] == [5.0, 4.0]
    assert losses[3] == 0.5
    assert losses[5:] == [1.5, 3.0, 2.0]  # "1.5" reads as the event readers read it
    assert math.isnan(losses[2])  # null
    assert math.isnan(losses[4])  # "high"

    # The lines the event reader skips, with its words and numbers; and two steps no int64
    # holds: "7" and 2**63.
    assert notes[:3] == event_notes
    assert len(event_notes) == 3
    assert [n.split(":")[0] for n in notes] == [
        "metrics.jsonl line 6",
        "metrics.jsonl line 8",
        "metrics.jsonl line 9",
        "metrics.jsonl line 11",
        "metrics.jsonl line 13",
    ]
    assert "torn line" in notes[0]
    assert "Mystery" in notes[1]
    assert "extra" in notes[2]
    assert notes[3] == "metrics.jsonl line 11: a step numbered '7'; skipped"
    assert notes[4] == f"metrics.jsonl line 13: a step numbered {2**63}; skipped"


def test_the_last_row_of_a_step_logged_twice_is_kept_in_step_order(tmp_path: Path):
    path = tmp_path / "metrics.jsonl"
    awkward_log(path)
    last = read_run_metrics(path).steps.last_per_step()
    assert last.step.tolist() == [1, 2, 3, 6, 8, 10]
    assert last.loss.tolist()[:4] == [5.0, 3.0, 2.0, 0.5]  # the resumed run's 2 and 3
    assert len(LoggedSteps().last_per_step()) == 0


def test_a_missing_or_empty_log_has_no_steps_and_no_events(tmp_path: Path):
    missing = read_run_metrics(tmp_path / "metrics.jsonl")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    for metrics in (missing, read_run_metrics(tmp_path / "empty.jsonl")):
        assert len(metrics.steps) == 0
        assert metrics.events == []


def test_lines_that_are_not_one_object_each_are_decoded_one_by_one():
    """A block whose lines would decode together as other values is not decoded whole."""
    for lines in ([b"[1", b"2]", b"3, 4"], [b'{"a": 1', b'"b": 2}', b"{}, {}"]):
        decoded = list(follow.decoded_records(lines))
        assert [(i, why) for i, _, why in decoded] == [(0, NOT_JSON), (1, NOT_JSON), (2, NOT_JSON)]
    lines = [b'{"a": 1}', b"", b'  {"b": 2}\n']
    assert list(follow.decoded_records(lines)) == [(0, {"a": 1}, ""), (2, {"b": 2}, "")]
