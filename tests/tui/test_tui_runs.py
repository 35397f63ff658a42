"""The Runs pane: the runs table, marking runs, comparing them, opening one in Samples.

Over two recorded tiny runs (``tests/fixtures/tiny_runs``: two learning rates, one test set)
and a third folder written while the app is open, as a sweep in another terminal would.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static, TabbedContent

from tests.fixtures.record_tiny_run import RUN_NAMES, copy_recorded_runs
from tests.helpers.runs import small
from tests.helpers.tui import show_pane, wait_for
from workbench.core.atomic import write_json
from workbench.core.live.writer import RunWriter
from workbench.core.run_folder.layout import RunFolder
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.charts import SeriesChart
from workbench.tui.widgets.runs_pane import RunsPane
from workbench.tui.widgets.samples_pane import SamplesPane
from workbench.tui.widgets.training_pane import TrainingPane
from workbench.tui.widgets.translate_pane import TranslatePane


@pytest.fixture
def runs_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> WorkbenchApp:
    """An app on an output folder holding the two recorded runs (relative paths)."""
    monkeypatch.chdir(tmp_path)
    copy_recorded_runs(Path("out"))
    return WorkbenchApp(small(Path(".")))


async def open_runs(pilot) -> RunsPane:
    """Show the Runs pane and wait for the two recorded runs in its table."""
    await show_pane(pilot, "runs")
    pane = pilot.app.query_one(RunsPane)
    await wait_for(pilot, lambda: pane.query_one(DataTable).row_count == 2, what="the runs listed")
    return pane


def table_text(pane: RunsPane) -> list[list[str]]:
    table = pane.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_marked_runs_are_compared_with_curves_and_the_paired_test(runs_app):
    async with runs_app.run_test(size=(130, 40)) as pilot:
        pane = await open_runs(pilot)
        newest, oldest = table_text(pane)
        assert newest[1] == RUN_NAMES[1]
        assert newest[2] == "finished"
        assert oldest[1] == RUN_NAMES[0]
        # The changed settings give way in the table and stand in full under it.
        detail = str(pane.query_one("#runs-detail", Static).render())
        assert detail.startswith(f"{RUN_NAMES[1]}: 6 epochs, best 4 · changed from preset: ")
        assert " learning_rate=0.001 " in detail
        # Until runs are compared, the chart draws the highlighted run's curve.
        chart = pane.query_one("#runs-chart", SeriesChart)
        await wait_for(pilot, lambda: chart.point_count(RUN_NAMES[1]) == 6, what="its curve")
        # c with fewer than two marks says what to do, and nothing runs.
        await pilot.press("c")
        assert pane.comparison is None
        # Mark the older run first: it becomes A, the baseline.
        await pilot.press("down", "space", "up", "space")
        assert pane.marked == [RUN_NAMES[0], RUN_NAMES[1]]
        assert [row[0] for row in table_text(pane)] == ["B", "A"]
        await pilot.press("c")
        await wait_for(
            pilot, lambda: pane.comparison is not None, timeout=120, what="the comparison"
        )
        chart = pane.query_one("#runs-chart", SeriesChart)
        assert sorted(chart.series) == ["A learning_rate=0.003", "B learning_rate=0.001"]
        assert chart.point_count("A learning_rate=0.003") == 6
        assert chart.point_count("B learning_rate=0.001") == 6
        text = str(pane.query_one("#runs-compare", Static).render())
        assert "Settings that differ:" in text
        assert "p (bs)" in text
        assert "p (ar)" in text
        assert "\n  B " in text  # B's row of the paired-test table
        # Unmarking keeps the others' letters in order.
        await pilot.press("down", "space")
        assert pane.marked == [RUN_NAMES[1]]


async def test_enter_opens_a_run_in_samples_and_new_runs_appear(runs_app):
    async with runs_app.run_test(size=(130, 40)) as pilot:
        pane = await open_runs(pilot)
        # The older run's own model (out/best_model holds whichever run was published last).
        own_model = Path("out/runs") / RUN_NAMES[0] / "best_model"
        own_model.mkdir()
        await pilot.press("down", "enter")
        tabbed = runs_app.query_one(TabbedContent)
        await wait_for(pilot, lambda: tabbed.active == "samples", what="the Samples pane")
        samples = runs_app.query_one(SamplesPane)
        assert samples.query_one(DataTable).row_count == 18
        assert RUN_NAMES[0] in str(samples.query_one("#samples-summary", Static).render())
        assert runs_app.query_one(TranslatePane).session.model("tuned").name == str(own_model)
        # A run that has only begun (a sweep's next trial, held by its writer) shows up
        # as running, and Enter opens it in the Training pane, which follows it.
        started = Path("out/runs/20260103-000000-demo")
        started.mkdir()
        writer = RunWriter(threading.Event())
        writer.hold(started)
        write_json(RunFolder(started).config, {"preset": "demo", "epochs": 2.0})
        await show_pane(pilot, "runs")
        pane.refresh_runs()
        rows = table_text(pane)
        assert len(rows) == 3
        assert rows[0][1:3] == [started.name, "running"]
        # The cursor stayed on the run it was on, though a row came in above it.
        highlighted = pane.highlighted()
        assert highlighted is not None
        assert highlighted.run_id == RUN_NAMES[0]
        pane.query_one(DataTable).move_cursor(row=0)
        await pilot.press("enter")
        await wait_for(pilot, lambda: tabbed.active == "training", what="the Training pane")
        training = runs_app.query_one(TrainingPane)
        assert training.watcher.attached is not None
        assert training.watcher.attached.run_dir == started
        # Once its writer is gone without a summary, it is killed, and cannot be opened
        # in Samples: one clear line instead.
        writer.release("running")  # as a kill -9 leaves the record: "running", no writer
        write_json(
            started / "writer.json",
            {**json.loads((started / "writer.json").read_text()), "pid": 2**22 + 1},
        )
        await wait_for(pilot, lambda: training.watcher.attached is None, what="the run let go")
        assert training.watcher.last_status == "killed"
        await show_pane(pilot, "runs")
        pane.refresh_runs()
        assert table_text(pane)[0][1:3] == [started.name, "killed"]
        pane.query_one(DataTable).move_cursor(row=0)
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert tabbed.active == "runs"
        assert any("has no results to show" in n.message for n in runs_app._notifications)


async def test_an_output_folder_without_runs_says_how_to_make_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = WorkbenchApp(small(Path(".")))
    async with app.run_test(size=(130, 40)) as pilot:
        await show_pane(pilot, "runs")
        summary = app.query_one(RunsPane).query_one("#runs-summary", Static)
        await wait_for(
            pilot, lambda: "no runs under" in str(summary.render()), what="the no-runs line"
        )
        assert "workbench sweep" in str(summary.render())


def test_columns_give_way_whole_so_no_score_is_cut():
    """At 80 columns two-digit scores with intervals (``11.13 (9.42…12.87)``) keep their
    width: the changed settings give way first, then epochs, then the best epoch, then the
    objective (``cpo · chrF``), which is not shown at all where no run has one."""
    from workbench.tui.widgets.runs_pane import shown_columns

    widths = [1, 20, 8, 9, 6, 4, 18, 18, 44]  # as wide as their widest cells
    none = frozenset({3})  # no run trained past the references: no objective column
    assert shown_columns(widths, 200, none) == [0, 1, 2, 4, 5, 6, 7, 8]
    assert shown_columns(widths, 98, none) == [0, 1, 2, 4, 5, 6, 7]
    assert shown_columns(widths, 78, none) == [0, 1, 2, 6, 7]
    widths[3] = 10  # "cpo · chrF"
    assert shown_columns(widths, 200) == list(range(9))
    assert shown_columns(widths, 100) == [0, 1, 2, 3, 5, 6, 7]
    assert shown_columns(widths, 90) == [0, 1, 2, 3, 6, 7]
    assert shown_columns(widths, 80) == [0, 1, 2, 6, 7]


async def test_a_run_trained_past_the_references_shows_its_objective_and_ranker(runs_app):
    """The objective column comes with the first run that has one (``cpo · chrF``, the
    ranker as tables name it); runs trained on the references leave it blank."""
    from tests.helpers.ranked_runs import ranked_summary, write_ranked_run

    async with runs_app.run_test(size=(130, 40)) as pilot:
        pane = await open_runs(pilot)
        table = pane.query_one(DataTable)
        assert "objective" not in [str(c.label) for c in table.columns.values()]
        write_ranked_run(Path("out/runs/20260104-000000-demo-cpo"), ranked_summary())
        pane.refresh_runs()
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[:4] == ["", "run", "status", "objective"]
        ranked, *recorded = table_text(pane)
        assert ranked[1:4] == ["20260104-000000-demo-cpo", "finished", "cpo · chrF"]
        assert [row[3] for row in recorded] == ["", ""]
        table.move_cursor(row=0)
        await pilot.pause()
        detail = str(pane.query_one("#runs-detail", Static).render())
        assert "best — · cpo · chrF · changed from preset" in detail
