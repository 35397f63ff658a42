"""Pilot tests of the Textual app: every pane, a real short run, stop, translate."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Static, TabbedContent

from tests.helpers.data import scores_block
from tests.helpers.paths import FIXTURES
from tests.helpers.runs import small
from tests.helpers.tui import samples_shown, show_pane, wait_for
from workbench.core.evaluate.metrics import sentence_bleu, sentence_chrf
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.charts import SeriesChart, clean_series, integer_ticks
from workbench.tui.widgets.dataset_pane import SCROLLBAR, DatasetPane, length_bins
from workbench.tui.widgets.training_pane import TrainingPane
from workbench.tui.widgets.translate_pane import TranslatePane

RECORDED_RUN = FIXTURES / "tiny_run"


def test_chart_series_drop_non_finite_and_downsample():
    xs = list(range(1000))
    ys = [float("nan") if i % 10 == 0 else float(i) for i in xs]
    ys[5] = float("inf")
    ys[503] = 5000.0  # a spike evenly spaced points would step over
    cx, cy = clean_series([float(x) for x in xs], ys, cells=100)
    assert len(cx) <= 202
    assert cx[-1] == 999
    assert (503.0, 5000.0) in zip(cx, cy, strict=True)
    assert all(y == y and abs(y) != float("inf") for y in cy)


def test_whole_numbers_get_whole_ticks_and_bins():
    assert integer_ticks(1, 54) == [10, 20, 30, 40, 50]  # steps on the loss chart
    assert integer_ticks(0, 41, most=5) == [0, 10, 20, 30, 40]  # histogram counts
    assert integer_ticks(0, 994, most=5) == [0, 200, 400, 600, 800]
    assert integer_ticks(5, 5) == [5]
    assert length_bins([3, 3, 5]) == ([3, 4, 5], [2, 0, 1])
    starts, counts = length_bins(list(range(1, 100)))
    assert len(starts) <= 30
    assert sum(counts) == 99
    assert starts[1] - starts[0] == 4


async def test_panes_switch_and_dataset_filters(tmp_path: Path):
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        dataset = app.query_one(DatasetPane)
        await wait_for(pilot, lambda: bool(dataset.rows), what="the dataset loaded")
        assert len(dataset.matches) == 180  # train, validation and test rows
        for pane in ["training", "samples", "translate", "attention", "dataset"]:
            await show_pane(pilot, pane)  # F2…F5, F1; focus moves after the next refresh
            assert app.query_one("#panes", TabbedContent).active == pane
        table = dataset.query_one("#dataset-table", DataTable)
        await wait_for(pilot, lambda: app.focused is table, what="focus on the dataset table")
        await pilot.press("3")  # digits work where focus is not in a text field
        await wait_for(
            pilot,
            lambda: app.query_one("#panes", TabbedContent).active == "samples",
            what="3 shows the Samples pane",
        )
        assert app.query_one("#panes", TabbedContent).active == "samples"
        await pilot.press("1")
        await wait_for(pilot, lambda: app.focused is table, what="1: back on the dataset table")
        await pilot.press("/")
        field = dataset.query_one("#dataset-filter", Input)
        await wait_for(pilot, lambda: app.focused is field, what="/ focuses the filter")
        await pilot.press(*"tea")
        assert dataset.query_one("#dataset-filter", Input).value == "tea"
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(dataset.matches) < 160)
        assert dataset.matches
        assert all(
            "tea" in p.source.lower() or "tea" in p.target.lower() for _, p in dataset.matches
        )


async def test_in_a_text_field_digits_are_typed_and_the_footer_says_how_to_leave(tmp_path: Path):
    """Translate focuses its sentence box: a 2 pressed next is typed, not a pane switch,
    and the 80-column footer names the two ways out (Escape, F1-F5) only while typing."""
    from textual.widgets import Footer

    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await show_pane(pilot, "translate")
        await wait_for(pilot, lambda: isinstance(app.focused, Input), what="the sentence box")
        field = app.focused
        assert isinstance(field, Input)
        await pilot.press("2")
        await pilot.pause()
        assert field.value.endswith("2")
        assert app.query_one("#panes", TabbedContent).active == "translate"
        shown = {
            b.binding.description for b in app.screen.active_bindings.values() if b.binding.show
        }
        assert {"Leave field", "Panes"} <= shown
        assert app.query_one(Footer).compact  # 80 columns: every key fits
        await pilot.press("f2")
        await wait_for(
            pilot, lambda: app.query_one("#panes", TabbedContent).active == "training", what="F2"
        )
        await wait_for(pilot, lambda: not isinstance(app.focused, Input), what="focus left")
        shown = {
            b.binding.description for b in app.screen.active_bindings.values() if b.binding.show
        }
        assert not {"Leave field", "Panes"} & shown
        await pilot.press("4", "escape", "3")  # back, out of the field, then a digit
        await wait_for(
            pilot, lambda: app.query_one("#panes", TabbedContent).active == "samples", what="3"
        )


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 36)], ids=str)
async def test_dataset_columns_share_the_width_and_counts_are_whole(
    tmp_path: Path, size: tuple[int, int]
):
    """Source and target both readable (CJK takes two cells), every column on screen, and
    the histogram counts printed as whole numbers (they read 41.0, 34.2 before)."""
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=size) as pilot:
        dataset = app.query_one(DatasetPane)
        table = dataset.query_one("#dataset-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 180, what="the dataset table filled")

        def width_used() -> int:
            return sum(column.get_render_width(table) for column in table.columns.values())

        await wait_for(
            pilot,
            lambda: width_used() + SCROLLBAR <= table.size.width,
            what="every column fits the table",
        )
        widths = {str(column.label): column.width for column in table.columns.values()}
        source, target = widths["source"], widths["target"]
        assert list(widths) == ["split", "source", "target", "src w", "tgt ch"]
        assert target >= 10  # five Chinese characters, where it had room for two
        assert target >= (source + target) / 3
        if size[0] >= 120:
            assert target >= dataset.needs[1]  # nine in ten targets in full
        histogram = str(dataset.query_one("#dataset-hist").render())
        counts = re.findall(r"([\d.]+)┤", histogram)
        assert counts, counts
        assert all(label.isdigit() for label in counts), counts


async def test_training_shows_a_killed_run_and_all_samples(tmp_path: Path):
    """The newest run is shown as it ended, even one killed mid-line; 0 samples reads all."""
    run = tmp_path / "out" / "runs" / "20260101-000000-demo"
    run.mkdir(parents=True)
    recorded = (RECORDED_RUN / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    steps = [line for line in recorded if '"TrainStep"' in line][:5]
    (run / "metrics.jsonl").write_text("\n".join([*steps, '{"event": "TrainSt']), "utf-8")
    app = WorkbenchApp(small(tmp_path, samples=0))
    async with app.run_test(size=(100, 30)) as pilot:
        await show_pane(pilot, "training")
        training = app.query_one(TrainingPane)
        await wait_for(pilot, lambda: training.watcher.last_status == "killed", what="the replay")
        assert training.query_one("#loss-chart", SeriesChart).point_count("loss") == 5
        assert str(training.query_one("#train-run", Static).render()) == (
            "last run 20260101-000000-demo: killed"
        )
        assert training.query_one("#set-samples", Input).value == "all"
        assert training.edited_config().samples == 0


async def test_invalid_setting_is_refused_without_starting(tmp_path: Path):
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await show_pane(pilot, "training")
        training = app.query_one(TrainingPane)
        training.query_one("#set-learning_rate", Input).value = "-1"
        await pilot.press("s")
        # The refusal is what the user sees; "not running" alone would also hold if the
        # key had never arrived.
        await wait_for(
            pilot,
            lambda: any(n.title == "Invalid setting" for n in app._notifications),
            what="the invalid-setting message",
        )
        assert not training.watcher.running
        assert str(training.query_one("#train-status", Static).render()) == "idle"
        assert not (tmp_path / "out" / "runs").exists()


def sample_row(source: str) -> dict[str, Any]:
    """A before/after row as a run's summary and translations files hold it."""
    return {"source": source, "reference": "茶", "before": "x", "after": "茶",
            "bleu_before": 0.0, "bleu_after": 100.0}  # fmt: skip


def saved_run(tmp_path: Path, summary: dict[str, object]) -> Path:
    """A finished run's folder under ``tmp_path/out`` holding ``summary``."""
    run = tmp_path / "out" / "runs" / "20260101-000000-demo"
    run.mkdir(parents=True)
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return run


def saved_test_run(tmp_path: Path) -> Path:
    """A finished run with test scores and no samples: its rows are a test's to write."""
    return saved_run(tmp_path, {
        "status": "finished",
        "test": scores_block("test", (0.5, 9.5), (1.0, 20.0)),
        "bleu_tokenize": "zh",
        "samples": [],
    })  # fmt: skip


async def test_app_opens_on_a_saved_run(tmp_path: Path):
    saved_run(tmp_path, {
        "status": "finished",
        "test": scores_block("test", (0.5, 9.5), (1.0, 20.0)),
        "validation": scores_block("validation", (0.4, 9.9), (1.1, 20.5)),
        "bleu_tokenize": "zh",
        "best_model": str(tmp_path / "out" / "best_model"),
        "samples": [sample_row("[/bold] tea")],
    })  # fmt: skip
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        samples = await samples_shown(pilot, app)
        assert samples.query_one("#samples-table", DataTable).row_count == 1
        assert samples.selected_source() == "[/bold] tea"
        header = str(samples.query_one("#samples-summary").render())
        assert "test (10% held out, seed 42, 425): BLEU 0.50 → 9.50 (+9.00, 95% CI" in header
        assert "validation (10% held out, seed 42, 425): BLEU 0.40 → 9.90" in header


async def test_a_torn_translations_file_shows_the_rest_with_a_note(tmp_path: Path):
    """A killed writer leaves a half line at the end of test_translations.jsonl: the
    Samples pane shows every whole row and says one line was skipped."""
    run = saved_test_run(tmp_path)
    rows = [sample_row(f"tea {i}") for i in range(3)]
    torn = json.dumps(rows[0])[:17]
    (run / "test_translations.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows) + torn, encoding="utf-8"
    )
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        samples = await samples_shown(pilot, app)
        assert samples.query_one("#samples-table", DataTable).row_count == 3
        header = str(samples.query_one("#samples-summary").render())
        assert "note: 1 unreadable line of test_translations.jsonl skipped" in header


def scored_row(source: str, reference: str, before: str, after: str) -> dict[str, Any]:
    """A translations-file row with real sentence BLEU and chrF, as score_rows writes it."""
    return {
        "source": source,
        "reference": reference,
        "before": before,
        "after": after,
        "bleu_before": round(sentence_bleu(before, reference, "zh"), 2),
        "bleu_after": round(sentence_bleu(after, reference, "zh"), 2),
        "chrf_before": round(sentence_chrf(before, reference), 2),
        "chrf_after": round(sentence_chrf(after, reference), 2),
    }


async def test_o_orders_the_samples_by_their_sentence_chrf_change(tmp_path: Path):
    run = saved_test_run(tmp_path)
    rows = [
        scored_row("Some tea.", "一些茶。", "茶", "一些茶"),  # rises a little
        scored_row("I am well.", "我很好。", "我很好。", "好"),  # falls most
        scored_row("I like tea.", "我喜欢喝茶。", "狗", "我喜欢喝茶。"),  # rises most
        sample_row("A row without chrF."),  # a hand-edited file's row
    ]
    (run / "test_translations.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    changes = [round(r["chrf_after"] - r["chrf_before"], 2) for r in rows[:3]]
    assert changes[2] > changes[0] > 0 > changes[1]
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        samples = await samples_shown(pilot, app)
        table = samples.query_one("#samples-table", DataTable)

        def sources() -> list[str]:
            return [table.get_row_at(n)[0].plain for n in range(table.row_count)]

        def labels() -> list[str]:
            return [str(column.label) for column in table.columns.values()]

        assert sources() == [r["source"] for r in rows]  # test order
        assert table.get_row_at(2)[5] == f"{changes[2]:+.1f}"
        assert table.get_row_at(3)[4:] == ["—", "—"]  # no chrF: a dash, never 0.0
        await pilot.press("o")
        assert sources() == ["I like tea.", "Some tea.", "I am well.", "A row without chrF."]
        assert labels()[-1] == "Δ ▼"
        assert samples.selected_source() == "I like tea."
        detail = str(samples.query_one("#samples-detail", Static).render())
        assert f"chrF {rows[2]['chrf_before']:.1f}→100.0 ({changes[2]:+.1f})" in detail
        await pilot.press("o")
        assert sources() == ["I am well.", "Some tea.", "I like tea.", "A row without chrF."]
        assert labels()[-1] == "Δ ▲"
        await pilot.press("o")
        assert sources() == [r["source"] for r in rows]
        assert labels()[-1] == "Δ"


@pytest.mark.parametrize("bad", ["nope", "/dev/null/x"])
async def test_translate_with_a_missing_model_keeps_the_app_up(tmp_path: Path, bad: str):
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await show_pane(pilot, "translate")
        translate = app.query_one(TranslatePane)
        translate.set_models(tuned=str(tmp_path / bad))
        translate.query_one("#translate-input", Input).value = "hello"
        translate.query_one("#translate-input", Input).focus()
        await pilot.press("enter")

        # The user is told which model is missing and what to do; no row, no crash.
        def errors() -> list[str]:
            return [
                n.message
                for n in app._notifications
                if n.title == "Translate" and n.severity == "error"
            ]

        await wait_for(pilot, lambda: bool(errors()), what="the missing-model message")
        assert f"model folder '{tmp_path / bad}' does not exist; train one first" in errors()[0]
        table = translate.query_one("#translate-history", DataTable)
        assert table.row_count == 1
        assert str(table.get_row_at(0)[2]) == "not translated"
        assert translate.pending == 0
        assert app.is_running


async def test_keys_left_out_of_the_footer_are_in_the_palette(tmp_path: Path):
    from textual.widgets import Footer

    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Screenshot", "Report", "Quit"} <= titles
        assert app.query_one(Footer).compact  # narrow: no spaces between the keys
        await pilot.resize_terminal(120, 36)
        await wait_for(pilot, lambda: not app.query_one(Footer).compact, what="a wide footer")
