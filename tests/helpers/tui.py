"""Driving the Textual app under a Pilot: wait for a state instead of sleeping, show a pane
with the focus in it, hold or start a training run, open the Samples or Translate pane."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from textual.widgets import DataTable, Input, TabbedContent

from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.charts import SeriesChart
from workbench.tui.widgets.samples_pane import SamplesPane
from workbench.tui.widgets.training_pane import TrainingPane
from workbench.tui.widgets.translate_pane import TranslatePane


async def wait_for(pilot, predicate, timeout: float = 60.0, what: str = "") -> None:
    """Let a Textual app run until ``predicate()`` holds (real work happens on threads).

    Tests wait for a state instead of asserting it after a fixed pause: under load (a
    fresh clone, other jobs on the machine) the app can take seconds to get there, and a
    fixed pause then fails a test that is right. ``what`` names the state in the failure.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"not reached in {timeout:g} s: {what or 'condition'}")
        await pilot.pause(0.1)


async def show_pane(pilot, name: str) -> None:
    """Press the pane's F-key (the Lab: its digit); wait until it is shown, mounted, focused.

    The keys a test presses next are handled by the focused widget: the Training keys
    (s, x, r) work only once focus is in that pane and outside a text field, and the
    hidden panes are mounted only after the first frame. A test that presses them before
    then races the app, and fails only under load.
    """
    from textual.widgets import TabPane

    from workbench.tui.app import F_KEY_PANES, PANES

    app = pilot.app
    if name in F_KEY_PANES:
        await pilot.press(f"f{PANES.index(name) + 1}")
    else:  # the Lab has only its digit (F6 is Screenshot); Escape leaves a text field first
        await pilot.press("escape", str(PANES.index(name) + 1))

    def shown() -> bool:
        tab = app.query_one(f"TabPane#{name}", TabPane)
        focused = app.focused
        return (
            app.query_one("#panes", TabbedContent).active == name
            and bool(tab.children)
            and focused is not None
            and tab in focused.ancestors
        )

    await wait_for(pilot, shown, what=f"the {name} pane shown with the focus in it")


def hold_training(monkeypatch: pytest.MonkeyPatch, after_steps: int) -> threading.Event:
    """Hold each training step after the first ``after_steps`` until the returned Event is
    set. A test that acts while a run trains (switches panes, presses stop) then has all
    the time it needs: a tiny run warm in memory can finish within one key press."""
    from transformers import Seq2SeqTrainer

    real_step = Seq2SeqTrainer.training_step
    go_on = threading.Event()

    def held_step(self, *args, **kwargs):
        if self.state.global_step >= after_steps and not go_on.wait(120):
            raise RuntimeError("training held for 120 s: the test never let it go on")
        return real_step(self, *args, **kwargs)

    monkeypatch.setattr(Seq2SeqTrainer, "training_step", held_step)
    return go_on


async def start_training(pilot):
    """Open the Training pane, press Start, and wait for two logged losses: a run that is
    really under way. Returns the pane."""

    await show_pane(pilot, "training")
    training = pilot.app.query_one(TrainingPane)
    await pilot.press("s")
    await wait_for(pilot, lambda: training.watcher.running, what="the run started")
    chart = pilot.app.query_one("#loss-chart", SeriesChart)
    await wait_for(pilot, lambda: chart.point_count("loss") >= 2, what="two logged losses")
    return training


async def samples_shown(pilot: Any, app: WorkbenchApp) -> SamplesPane:
    """The Samples pane once it has rows of the saved run."""
    await show_pane(pilot, "samples")
    samples = app.query_one(SamplesPane)
    await wait_for(pilot, lambda: samples.query_one("#samples-table", DataTable).row_count > 0,
                   what="the saved run's rows")  # fmt: skip
    return samples


async def open_translate(pilot) -> TranslatePane:
    """Press 4 as a user does (focus starts in the Dataset table) and wait for the input."""
    app = pilot.app
    await wait_for(pilot, lambda: bool(app.query(TranslatePane)), what="the panes mounted")
    await pilot.press("4")
    pane = app.query_one(TranslatePane)
    field = pane.query_one("#translate-input", Input)
    await wait_for(pilot, lambda: app.focused is field, what="the input has the focus")
    return pane
