"""Pilot tests of the Textual app: every pane, a real short run, stop, translate.

The tests that train (or build), split from tests/tui/test_tui.py, whose other tests do not.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, TabbedContent

from tests.helpers.runs import small
from tests.helpers.tui import hold_training, show_pane, start_training, wait_for
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.attention_pane import AttentionPane
from workbench.tui.widgets.charts import SeriesChart
from workbench.tui.widgets.quit_dialog import QuitDialog
from workbench.tui.widgets.samples_pane import SamplesPane
from workbench.tui.widgets.training_pane import TrainingPane
from workbench.tui.widgets.translate_pane import TranslatePane


async def test_training_run_fills_charts_samples_and_translate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    go_on = hold_training(monkeypatch, after_steps=0)  # until the pane switch is checked
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await show_pane(pilot, "training")
        training = app.query_one(TrainingPane)
        await pilot.press("s")
        await wait_for(pilot, lambda: training.watcher.running, what="the run started")
        assert training.watcher.running
        await show_pane(pilot, "dataset")  # the UI answers while training runs
        assert app.query_one("#panes", TabbedContent).active == "dataset"
        await show_pane(pilot, "training")
        go_on.set()
        await wait_for(pilot, lambda: not training.watcher.running, timeout=300)
        assert training.watcher.last_status == "finished"
        assert app.query_one("#loss-chart", SeriesChart).point_count("loss") >= 5
        assert app.query_one("#bleu-chart", SeriesChart).point_count("BLEU") == 3
        samples = app.query_one(SamplesPane)
        table = samples.query_one("#samples-table", DataTable)
        await wait_for(pilot, lambda: table.row_count >= 5, timeout=10)
        assert (tmp_path / "out" / "best_model" / "config.json").is_file()

        await show_pane(pilot, "translate")
        translate = app.query_one(TranslatePane)
        translate.query_one("#translate-input", Input).value = "I like tea."
        translate.query_one("#translate-input", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: translate.pending == 0, timeout=60)
        history = tmp_path / "out" / "console_history.jsonl"
        assert (
            json.loads(history.read_text(encoding="utf-8").splitlines()[0])["source"]
            == "I like tea."
        )

        await pilot.press("ctrl+t")  # open the highlighted sentence in the Attention pane
        attention = app.query_one(AttentionPane)
        await wait_for(pilot, lambda: attention.result is not None, timeout=60)
        assert app.query_one("#panes", TabbedContent).active == "attention"
        first = str(attention.query_one("#attention-status").render())
        await pilot.press("escape")  # leave the field, so that ] and h are not typed into it
        await wait_for(
            pilot,
            lambda: not isinstance(app.focused, Input),
            what="Escape leaves the sentence field",
        )
        await pilot.press("]", "h")  # next layer; one head
        await wait_for(pilot, lambda: attention.head_index == 0, what="h shows one head")
        assert attention.result is not None
        assert (
            attention.layer_index
            == (attention.result.default_layer + 1) % attention.result.num_layers
        )
        assert attention.head_index == 0
        assert str(attention.query_one("#attention-status").render()) != first


async def test_stop_ends_with_a_checkpoint_and_resume_continues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    go_on = hold_training(monkeypatch, after_steps=2)  # two logged losses, then until x
    app = WorkbenchApp(small(tmp_path, epochs=3.0, logging_steps=1))
    async with app.run_test(size=(100, 30)) as pilot:
        training = await start_training(pilot)
        await pilot.press("x")
        go_on.set()
        await wait_for(pilot, lambda: not training.watcher.running, timeout=120)
        assert training.watcher.last_status == "stopped"
        runs = list((tmp_path / "out" / "runs").iterdir())
        assert list((runs[0] / "checkpoints").glob("checkpoint-*"))
        await pilot.press("r")  # Resume goes on in the same run folder
        await wait_for(
            pilot,
            lambda: not training.watcher.running and training.watcher.last_status == "finished",
            timeout=300,
        )
        # The app takes the finished run after the pane: leaving before it has would stop
        # the app under that message.
        await wait_for(
            pilot,
            lambda: any(n.title == "Run finished" for n in app._notifications),
            what="the app's Run finished notice",
        )
    assert list((tmp_path / "out" / "runs").iterdir()) == runs
    summary = json.loads((runs[0] / "summary.json").read_text())
    assert summary["status"] == "finished"
    assert summary["global_step"] == 27


async def test_quit_during_training_stops_with_a_checkpoint(tmp_path: Path):
    app = WorkbenchApp(small(tmp_path, epochs=30.0))
    loop = asyncio.get_running_loop()
    async with app.run_test(size=(100, 30)) as pilot:
        await start_training(pilot)
        await pilot.press("q")  # it asks: stop with a checkpoint, background, or stay
        await wait_for(pilot, lambda: isinstance(app.screen, QuitDialog), what="the question")
        started = loop.time()
        await pilot.press("s")
        await wait_for(pilot, lambda: not app.is_running, timeout=10)
        assert loop.time() - started < 5
    runs = list((tmp_path / "out" / "runs").iterdir())
    summary = json.loads((runs[0] / "summary.json").read_text())
    assert summary["status"] == "stopped"
    assert list((runs[0] / "checkpoints").glob("checkpoint-*"))
