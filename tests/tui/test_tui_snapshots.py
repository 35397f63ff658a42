"""Snapshot tests: each pane at work, at 80×24 and 120×36, with nothing that changes by itself.

The app opens on an output folder that holds a real tiny run, recorded once into
``tests/fixtures/tiny_run`` (see ``record_tiny_run.py``), and a tiny model built by the
``tiny_model_dir`` fixture as its best model. The Training pane shows the run's
``metrics.jsonl`` replayed, as on opening any output folder; the Samples pane shows the
run's test sentences; Translate and Attention run the tiny model for real (deterministic on CPU).

What would change between runs is fixed at its source, not masked: paths are relative
(the test works in its tmp folder), the translation clock ticks a fixed 21 ms, the replay
carries the recorded numbers (its ETAs end in "finished"), toasts stay until the frame is
taken, and no cursor blinks.
"""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Log, Static

from tests.fixtures.record_tiny_run import FILES, RUN_NAME, copy_recorded_runs, recorded_config
from tests.helpers.paths import FIXTURES
from tests.helpers.tui import show_pane, wait_for
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.attention_pane import AttentionPane
from workbench.tui.widgets.charts import SeriesChart
from workbench.tui.widgets.dataset_pane import DatasetPane
from workbench.tui.widgets.lab_pane import LabPane
from workbench.tui.widgets.runs_pane import RunsPane
from workbench.tui.widgets.samples_pane import SamplesPane
from workbench.tui.widgets.training_pane import TrainingPane
from workbench.tui.widgets.translate_pane import TranslatePane

RECORDED_RUN = FIXTURES / "tiny_run"
SIZES = {"80x24": (80, 24), "120x36": (120, 36)}
#: Typed into the Translate pane: English, Chinese, and text that looks like Rich markup.
CONSOLE_LINES = (
    "I like to drink tea.",
    "The bus is here, get on quickly!",
    "我喜欢喝茶。",
    "[bold]Not markup[/bold]",
)
ATTENTION_SENTENCE = "I like to drink tea."
#: Milliseconds each translation takes by the test's clock (the "ms" column).
TRANSLATION_TICK = 0.021


class SteadyClock:
    """A ``perf_counter`` that advances a fixed step per reading: every translation "takes"
    the same time, so the history's ms column is the same on every machine."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_model_dir: Path) -> WorkbenchApp:
    """An app over the recorded run and the tiny model, at relative paths in tmp_path."""
    import workbench.core.translate.translator

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")  # the tab underline slides otherwise
    run = Path("out/runs") / RUN_NAME
    run.mkdir(parents=True)
    for name in FILES:
        shutil.copyfile(RECORDED_RUN / name, run / name)
    shutil.copytree(tiny_model_dir, "out/best_model")  # the summary's best_model
    # Only the translation module's clock: Textual and asyncio keep the real one.
    monkeypatch.setattr(workbench.core.translate.translator, "time", SteadyClock(TRANSLATION_TICK))
    app = WorkbenchApp(recorded_config())
    # Toasts (a run finished, a model loaded) stay on screen until the frame is taken,
    # however long the machine takes to get there: 5 s by default.
    app.NOTIFICATION_TIMEOUT = 3600  # type: ignore[misc]  # Textual's ClassVar, for this app
    return app


async def settle(pilot: Pilot) -> None:
    """Wait for the dataset to load: it is read on a worker whatever pane is shown."""
    dataset = pilot.app.query_one(DatasetPane)
    await wait_for(pilot, lambda: bool(dataset.rows), what="the dataset loaded")


async def still(pilot: Pilot) -> None:
    """No blinking cursor in any field, and one more frame painted."""
    for field in pilot.app.query(Input):
        field.cursor_blink = False
    await pilot.pause(0.3)


async def dataset_at_work(pilot: Pilot) -> None:
    """The first page of the 180 pairs and the length histogram."""
    await show_pane(pilot, "dataset")
    table = pilot.app.query_one("#dataset-table", DataTable)
    await wait_for(pilot, lambda: table.row_count == 180, what="the dataset table filled")


async def training_replayed(pilot: Pilot) -> None:
    """The recorded run as the app shows it on opening: replayed from its metrics.jsonl."""
    await show_pane(pilot, "training")
    app = pilot.app
    training = app.query_one(TrainingPane)
    log = training.query_one(Log)
    await wait_for(
        pilot, lambda: training.watcher.last_status == "finished", what="the run replayed"
    )
    assert str(training.query_one("#train-status", Static).render()) == "finished"
    assert str(training.query_one("#train-run", Static).render()) == (
        f"last run {RUN_NAME}: finished · best epoch 1"
    )
    assert app.query_one("#loss-chart", SeriesChart).point_count("loss") == 28
    assert app.query_one("#bleu-chart", SeriesChart).point_count("BLEU") == 7  # before + 6
    assert log.lines[-1] == (
        f"  run folder: out/runs/{RUN_NAME} (config.json, metrics.jsonl, summary.json)"
    )


async def samples_full(pilot: Pilot) -> None:
    """The run's 18 test sentences, the first one highlighted and shown in full."""
    await show_pane(pilot, "samples")
    table = pilot.app.query_one(SamplesPane).query_one(DataTable)
    await wait_for(pilot, lambda: table.row_count == 18, what="the samples table filled")


async def translate_history(pilot: Pilot) -> None:
    """Lines typed into the console, translated by the tiny model."""
    await show_pane(pilot, "translate")
    pane = pilot.app.query_one(TranslatePane)
    field = pane.query_one("#translate-input", Input)
    table = pane.query_one("#translate-history", DataTable)
    for line in CONSOLE_LINES:
        field.value = line
        await pilot.press("enter")  # a row at once; one queue keeps the typing order
    await wait_for(pilot, lambda: pane.pending == 0, what="the translations")
    assert [e.source for e in pane.entries.values()] == list(CONSOLE_LINES)
    assert {table.get_row_at(i)[3] for i in range(table.row_count)} == {"21"}


async def attention_heatmap(pilot: Pilot) -> None:
    """A sentence typed into the Attention pane, its heatmap drawn; Escape leaves the field."""
    await show_pane(pilot, "attention")
    pane = pilot.app.query_one(AttentionPane)
    pane.query_one("#attention-input", Input).value = ATTENTION_SENTENCE
    await pilot.press("enter")
    await wait_for(pilot, lambda: pane.result is not None, what="the attention weights")
    await pilot.press("escape")
    heatmap = str(pane.query_one("#attention-heatmap", Static).render())
    assert "like" in heatmap


async def lab_attention(pilot: Pilot) -> None:
    """The Lab's attention study finished on the default sentence, its cross-attention shown.

    Only this study is snapshot: the decoding and cache studies print timings, which differ
    on every run; the attention weights of the tiny model on CPU do not.
    """
    await show_pane(pilot, "lab")
    pane = pilot.app.query_one(LabPane)
    await pilot.press("a", "g")
    await wait_for(pilot, lambda: pane.finished == 1, what="the attention study")
    assert pane.shown == "attention"
    assert "cross-attention" in str(pane.query_one("#lab-result", Static).render())


async def runs_compared(pilot: Pilot) -> None:
    """Two more recorded runs (two learning rates) appear next to the replayed one; both are
    marked and compared: overlaid curves, the settings that differ, the paired tests."""
    await show_pane(pilot, "runs")
    pane = pilot.app.query_one(RunsPane)
    table = pane.query_one(DataTable)
    await wait_for(pilot, lambda: table.row_count == 1, what="the replayed run listed")
    copy_recorded_runs(Path("out"))
    pane.refresh_runs()
    assert table.row_count == 3
    # The cursor stayed on the run it was on, now below the two that came in.
    assert table.cursor_row == 2
    table.move_cursor(row=0)
    await pilot.pause()
    await pilot.press("down", "space", "up", "space", "c")
    assert pane.marked == ["20260102-000000-demo", "20260102-010000-demo"]
    await wait_for(pilot, lambda: pane.comparison is not None, timeout=120, what="the comparison")


PANES: dict[str, Callable[[Pilot], Awaitable[None]]] = {
    "dataset": dataset_at_work,
    "training": training_replayed,
    "samples": samples_full,
    "translate": translate_history,
    "attention": attention_heatmap,
    "lab": lab_attention,
    "runs": runs_compared,
}


#: A cell's width in a Textual SVG screenshot (Rich's 0.61 × the 20 px font).
SVG_CELL = 12.2
SVG_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>')
#: Panes whose table headers are checked whole: the Translate history scrolls sideways.
HEADERS_WHOLE = [name for name in PANES if name != "translate"]


def screen_rows(svg: str) -> list[str]:
    """The text of a Textual SVG screenshot, one string per terminal row; each run of
    text is placed at the cell its x position names (a Chinese character takes two)."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for x, y, text in SVG_TEXT.findall(svg):
        rows.setdefault(float(y), []).append((float(x), html.unescape(text)))
    lines = []
    for y in sorted(rows):
        line = ""
        for x, text in sorted(rows[y]):
            line = line.ljust(round(x / SVG_CELL)) + text
        lines.append(line.replace("\xa0", " "))
    return lines


def assert_nothing_cut(app: App[Any], pane: str, rows: list[str]) -> None:
    """The title, every key the footer shows, and (where checked) every column header of
    the pane's tables stand whole in the screen's text."""
    assert f"{app.title} — {app.sub_title}" in rows[0]
    footer = rows[-1]
    shown: dict[str, str] = {}
    for active in app.screen.active_bindings.values():
        binding = active.binding
        if binding.show:  # the footer shows each action once, by its first key
            shown.setdefault(
                binding.action, f"{app.get_key_display(binding)} {binding.description}"
            )
    assert shown, "no keys in the footer"
    for key in shown.values():
        assert key in footer, f"{key!r} cut in the footer {footer!r}"
    if pane in HEADERS_WHOLE:
        screen = "\n".join(rows)
        for table in app.query_one(f"TabPane#{pane}").query(DataTable):
            for column in table.columns.values():
                assert str(column.label) in screen, f"header {column.label} cut"


@pytest.mark.parametrize("pane", list(PANES))
@pytest.mark.parametrize("size", list(SIZES))
def test_pane_snapshot(snap_compare, app: WorkbenchApp, size: str, pane: str):
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await PANES[pane](pilot)
        await still(pilot)
        # The frame the snapshot takes next, read as text.
        assert_nothing_cut(pilot.app, pane, screen_rows(pilot.app.export_screenshot()))

    assert snap_compare(app, run_before=run_before, terminal_size=SIZES[size])


@pytest.mark.parametrize("pane", list(PANES))
async def test_nothing_is_cut_at_100x30(app: WorkbenchApp, pane: str):
    """The other common terminal size, read as text without a snapshot of its own."""
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await PANES[pane](pilot)
        await still(pilot)
        assert_nothing_cut(app, pane, screen_rows(app.export_screenshot()))
