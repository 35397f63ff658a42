"""The TUI survives: failing workers, bad numbers, odd console input and SIGTERM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Log, Static, TabbedContent

from tests.helpers.data import ODD_INPUT
from tests.helpers.runs import small
from tests.helpers.tui import show_pane, wait_for
from workbench.core.events import EvalDone, TrainStep
from workbench.tui.app import WorkbenchApp
from workbench.tui.messages import RunEvent
from workbench.tui.widgets.charts import SeriesChart
from workbench.tui.widgets.training_pane import TrainingPane
from workbench.tui.widgets.translate_pane import TranslatePane


def notifications(app) -> list[str]:
    return [f"{n.title} {n.message}" for n in app._notifications]


def boom(*args, **kwargs):
    raise RuntimeError("injected failure")


@pytest.mark.parametrize("worker", ["dataset", "training", "translate"])
async def test_a_failing_worker_is_shown_and_the_app_stays_up(
    tmp_path: Path, monkeypatch, tiny_model_dir: Path, worker: str
):
    import workbench.core.data.prepared
    import workbench.core.train.run_training
    from workbench.core.translate.translator import Translator

    target = {
        "dataset": (workbench.core.data.prepared, "prepare_split"),
        "training": (workbench.core.train.run_training, "run_training"),
        "translate": (Translator, "translate"),
    }[worker]
    monkeypatch.setattr(*target, boom)
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        if worker == "training":
            await show_pane(pilot, "training")
            await pilot.press("s")
            training = app.query_one(TrainingPane)
            status = app.query_one("#train-status", Static)
            # Wait for the status to change: "not running" alone also holds before the key
            # arrives.
            await wait_for(
                pilot,
                lambda: str(status.render()) != "idle" and not training.watcher.running,
                timeout=30,
                what="the run ended",
            )
            assert not training.watcher.running
            assert str(app.query_one("#train-status").render()) == "failed"
        if worker == "translate":
            await show_pane(pilot, "translate")
            pane = app.query_one(TranslatePane)
            pane.set_models(tuned=str(tiny_model_dir))
            pane.query_one("#translate-input", Input).value = "hello"
            pane.query_one("#translate-input", Input).focus()
            await pilot.press("enter")
        await wait_for(
            pilot, lambda: any("injected failure" in n for n in notifications(app)), timeout=30
        )
        # A line that fails is its row's failure: the queue goes on with the next line.
        said = "Translate RuntimeError" if worker == "translate" else f"{worker} failed"
        assert any(said in n for n in notifications(app))
        await pilot.press("f1", "f3", "f4")  # still answering keys
        await wait_for(
            pilot,
            lambda: app.query_one("#panes", TabbedContent).active == "translate",
            what="the F-keys still switch panes",
        )
        assert app.is_running
        assert app.query_one("#panes", TabbedContent).active == "translate"


async def test_a_failed_line_never_shows_a_password(
    tmp_path: Path, monkeypatch, tiny_model_dir: Path
):
    """A library's error can quote a URL with its credentials (a mirror in HF_ENDPOINT):
    the row and the toast say the error with the password hidden, as interact does."""
    from transformers import MarianMTModel

    def unreachable(*args, **kwargs):
        raise RuntimeError("no answer from https://user:hunter2@mirror.example/api")

    monkeypatch.setattr(MarianMTModel, "generate", unreachable)
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await show_pane(pilot, "translate")
        pane = app.query_one(TranslatePane)
        pane.set_models(tuned=str(tiny_model_dir))
        pane.query_one("#translate-input", Input).value = "hello"
        pane.query_one("#translate-input", Input).focus()
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: any("mirror.example" in n for n in notifications(app)), timeout=60
        )
        (entry,) = pane.entries.values()
        assert entry.failed
        for said in [*notifications(app), *entry.notices]:
            assert "hunter2" not in said, said
        assert any("RuntimeError: no answer from https://user:***@" in n for n in entry.notices)


async def test_non_finite_values_never_reach_the_charts(tmp_path: Path):
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await show_pane(pilot, "training")
        pane = app.query_one(TrainingPane)
        for step, loss in enumerate([5.0, None, float("inf"), float("nan"), 4.0], 1):
            pane.post_message(
                RunEvent(
                    TrainStep(
                        step=step,
                        max_steps=10,
                        epoch=0.1 * step,
                        loss=loss,
                        learning_rate=None,
                        grad_norm=None,
                        samples_per_second=None,
                        eta_seconds=None,
                    )
                )
            )
        for bleu in (1.0, float("inf"), float("nan")):
            pane.post_message(RunEvent(EvalDone(step=5, epoch=1.0, bleu=bleu, chrf=bleu)))
        log = pane.query_one(Log)
        # Every event drawn: one log line each, the NaN ones included (5 steps, 3 scores).
        await wait_for(pilot, lambda: log.line_count == 8, what="all eight events drawn")
        assert app.query_one("#loss-chart", SeriesChart).point_count("loss") == 2
        assert app.query_one("#bleu-chart", SeriesChart).point_count("BLEU") == 1
        # The headless wording (core.views.event_text.EventText), which also says nan/inf.
        assert (
            log.lines[1] == "  step  2/10  epoch  0.20  loss nan/inf  lr —  grad —  "
            "— samples/s  ETA ?"
        )
        assert log.lines[-1] == "  epoch 1 done: BLEU nan  chrF nan  eval loss —  (validation)"
        assert str(pane.query_one("#train-status", Static).render()).startswith(
            "step 5/10 · epoch 0.50"
        )
        assert app.is_running


async def test_console_takes_odd_input_and_goes_on(tmp_path: Path, tiny_model_dir: Path):
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await show_pane(pilot, "translate")
        pane = app.query_one(TranslatePane)
        pane.set_models(tuned=str(tiny_model_dir))
        field = pane.query_one("#translate-input", Input)
        table = pane.query_one("#translate-history", DataTable)
        for text in ["", "    ", *ODD_INPUT]:
            field.value = text
            field.focus()
            await pilot.press("enter")
            await pilot.pause(0.1)
        assert table.row_count == len(ODD_INPUT)  # each row at once
        await wait_for(pilot, lambda: pane.pending == 0, timeout=120)
        assert app.is_running
        # One row per line, in typing order (one queue), each kept as typed.
        assert [e.source for e in pane.entries.values()] == ODD_INPUT
        assert all(e.translation or e.notices for e in pane.entries.values())
        said = [n for e in pane.entries.values() for n in e.notices]  # ⚠ rows, the detail line
        assert any("parts" in n for n in said)
        assert any("truncated" in n for n in said)
        history = (tmp_path / "out" / "console_history.jsonl").read_text(encoding="utf-8")
        rows = [json.loads(line) for line in history.splitlines()]
        assert len(rows) == len(ODD_INPUT)  # blank lines are not translations
        assert rows[4]["source"] == ODD_INPUT[4]


# --------------------------------------------------------------------------- real signals


async def test_report_key_without_any_run_is_shown_not_fatal(tmp_path: Path):
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f7")
        await wait_for(
            pilot, lambda: any("report failed" in n for n in notifications(app)), timeout=30
        )
        assert app.is_running
        # The message says what is missing and what to do.
        assert any(
            "no finished run under" in n and "train one first" in n for n in notifications(app)
        )
