"""Events and their one wording: the headless output and the TUI's training log agree."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from textual.widgets import Log

from tests.helpers.data import scores_block
from tests.helpers.paths import FIXTURES
from tests.helpers.runs import small
from tests.helpers.tui import wait_for
from workbench.cli.headless import HeadlessPrinter
from workbench.core.events import (
    EvalDone,
    Event,
    HubRetry,
    JsonlRecorder,
    Note,
    Phase,
    RunDone,
    Sample,
    SampleProgress,
    TrainStep,
    event_from_record,
)
from workbench.core.live.follow import MetricsFollower
from workbench.core.records.summary import RunSummary
from workbench.core.views.event_text import EventText
from workbench.core.views.numbers import format_seconds
from workbench.tui.app import WorkbenchApp
from workbench.tui.messages import RunEvent
from workbench.tui.widgets.training_pane import TrainingPane

SUMMARY = {
    "status": "finished",
    "train_seconds": 75.0,
    "best_model": "out/best_model",
    "test": scores_block("test", (0.5, 3.0), (4.0, 9.0)),
    "validation": scores_block("validation", (0.4, 2.0), (3.5, 8.0)),
}
MIRROR_FILE = (
    "https://hf-mirror.com/datasets/wmt/wmt19/resolve/0a1b/zh-en/train-00000-of-00013.parquet"
)
EVENTS: list[Event] = [
    Phase("data", "hsk"),
    SampleProgress(3, 6, 2_560, 4_800_000, kept=2),
    HubRetry(MIRROR_FILE, "HTTP 503", attempt=1, tries=6, wait_seconds=1.5),
    Note("run folder: out/runs/x"),
    Note("vocabulary capped", "warning"),
    Note("loss became nan at step 3", "error"),
    EvalDone(0, 0.0, 0.5, 4.0, stage="before", split="test", set_name="newstest", size=18),
    TrainStep(2, 10, 0.2, 5.25, 1e-3, 1.5, 40.0, 12.0),
    TrainStep(4, 10, 0.4, None, None, None, None, None),
    EvalDone(5, 1.0, 1.5, 6.0, loss=4.2),
    EvalDone(10, 2.0, 3.0, 9.0, stage="after", split="test", set_name="newstest", size=18),
    Sample("I like tea.", "我喜欢茶。", "我", "我喜欢茶。", 1.0, 100.0, 8.2, 100.0),
    RunDone("finished", "out/runs/x", RunSummary.from_dict(SUMMARY)),
]


def test_each_event_reads_as_one_plain_line_or_block():
    text = EventText()
    lines = [line for event in EVENTS for line in text.lines(event)]
    assert lines[:6] == [
        "[data] hsk",
        "  sample: 3/6 row groups, 2.5 KiB of 4.6 MiB (2 kept from an earlier try)",
        f"  hub: HTTP 503 from {MIRROR_FILE}; try 2 of 6 in 1.5 s",
        "  run folder: out/runs/x",
        "  warning: vocabulary capped",
        "  error: loss became nan at step 3",
    ]
    assert (
        "  step  2/10  epoch  0.20  loss 5.2500  lr 1.00e-03  grad 1.50  40.0 samples/s  "
        "ETA 12s" in lines
    )
    assert "  step  4/10  epoch  0.40  loss nan/inf  lr —  grad —  — samples/s  ETA ?" in lines
    assert (
        "  after fine-tuning,  test (newstest, 18): BLEU 3.00 (+2.50)   chrF 9.00 (+5.00)" in lines
    )
    assert "[samples] before / after on test sentences" in lines
    assert lines[-1] == "  run folder: out/runs/x (config.json, metrics.jsonl, summary.json)"
    assert any(line.startswith("  test (") and "BLEU 0.50 → 3.00" in line for line in lines)
    assert format_seconds(3723) == "1h02m03s"
    assert format_seconds(None) == "?"


async def test_the_tui_log_says_what_headless_prints(tmp_path: Path):
    """Once drifted: the TUI showed error notes as "warning:"."""
    out = io.StringIO()
    printer = HeadlessPrinter(out)
    for event in EVENTS:
        printer(event)
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("f2")
        await wait_for(pilot, lambda: bool(app.query(TrainingPane)))
        pane = app.query_one(TrainingPane)
        for event in EVENTS:
            pane.post_message(RunEvent(event))
        log = pane.query_one("#train-log", Log)
        expected = out.getvalue().splitlines()
        await wait_for(pilot, lambda: len(log.lines) >= len(expected))
        assert list(log.lines) == expected
        assert pane.watcher.last_status == "finished"


def test_replay_reads_back_what_the_recorder_writes(tmp_path: Path):
    """The replay's events are the ones the run emitted, field for field."""
    events: list[Event] = [
        Phase("train"),
        TrainStep(3, 54, 0.33, 6.5, 0.003, 0.9, 500.0, 1.5),
        EvalDone(9, 1.0, 0.62, 2.07, loss=6.49),
        RunDone(
            "finished",
            "out/runs/x",
            RunSummary.from_dict({"status": "finished", "samples": [{"source": "茶"}]}),
        ),
    ]
    recorder = JsonlRecorder(tmp_path / "metrics.jsonl")
    for event in events:
        recorder(event)
    assert MetricsFollower(tmp_path / "metrics.jsonl").read_new() == events
    recorded = MetricsFollower(FIXTURES / "tiny_run" / "metrics.jsonl").read_new()
    assert isinstance(recorded[-1], RunDone)
    assert recorded[-1].status == "finished"
    with pytest.raises(TypeError, match="fields"):
        event_from_record({"event": "Phase", "time": 0.0, "name": "x", "colour": "red"})
