"""The Translate pane as a student uses it at 80×24: rows at once, a queue, the focus kept,
the highlighted row's heatmap, and judgements that reach the run report."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Static, TabbedContent

from tests.helpers.runs import small
from tests.helpers.tui import open_translate, wait_for
from workbench.core.translate.translator import Translator
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.attention_pane import AttentionPane
from workbench.tui.widgets.translate_rows import LOADING

FIRST = "I like to drink tea with my friends every morning."
SECOND = "My brother is a doctor."


async def test_rows_appear_at_once_queue_and_show_the_translation_at_80_columns(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    shutil.copytree(tiny_model_dir, tmp_path / "out" / "best_model")
    loaded = threading.Event()  # the model "loads" until the test has seen both rows
    real_load = Translator.from_pretrained

    def slow_load(*args: Any, **kwargs: Any) -> Translator:
        assert loaded.wait(30), "the test never let the model load"
        return real_load(*args, **kwargs)

    monkeypatch.setattr(Translator, "from_pretrained", slow_load)
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_translate(pilot)
        table = pane.query_one("#translate-history", DataTable)
        field = pane.query_one("#translate-input", Input)
        await pilot.press(*FIRST, "enter")
        assert table.row_count == 1  # at once, before the model has loaded
        assert str(table.get_row_at(0)[2]) == LOADING
        await pilot.press(*SECOND, "enter")  # typed right after: queued, not lost
        assert table.row_count == 2
        assert app.focused is field
        loaded.set()
        await wait_for(pilot, lambda: pane.pending == 0, what="both translated")
        assert app.focused is field  # still typing after the answers came
        entries = list(pane.entries.values())
        assert [e.source for e in entries] == [FIRST, SECOND]
        assert all(e.translation for e in entries)
        # Every column fits the screen: the translation is on it, the long source cut.
        widths = sum(c.get_render_width(table) for c in table.columns.values())
        assert widths <= table.size.width
        assert str(table.get_row_at(0)[1]).endswith("…")
        shown = str(table.get_row_at(1)[2])
        assert entries[1].translation.startswith(shown.rstrip("…"))
        detail = str(pane.query_one("#translate-detail", Static).render())
        assert SECOND in detail
        assert entries[1].translation in detail

        await pilot.press("up", "ctrl+t")  # the older row, highlighted while typing
        attention = app.query_one(AttentionPane)
        await wait_for(pilot, lambda: attention.result is not None, what="the heatmap")
        assert attention.result is not None
        assert attention.result.sentence == FIRST
        assert app.query_one("#panes", TabbedContent).active == "attention"


async def test_a_long_sentence_from_translate_pages_with_a_key_in_the_footer(
    tmp_path: Path, tiny_model_dir: Path
):
    shutil.copytree(tiny_model_dir, tmp_path / "out" / "best_model")
    long = "My brother and I like to drink green tea with our friends every morning " * 2
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_translate(pilot)
        await pilot.press(*long.strip(), "enter")
        await wait_for(pilot, lambda: pane.pending == 0, what="translated")
        await pilot.press("ctrl+t")
        attention = app.query_one(AttentionPane)
        await wait_for(pilot, lambda: attention.result is not None, what="the heatmap")
        view = attention.query_one("#attention-view")
        await wait_for(pilot, lambda: app.focused is view, what="the focus on the heatmap")
        assert attention.pages > 1
        assert attention.page == 1
        footer_keys = {
            key for key, b in app.active_bindings.items() if b.binding.show and b.enabled
        }
        assert {"p", "right_square_bracket", "h"} <= footer_keys  # page, layer, head
        status = str(attention.query_one("#attention-status", Static).render())
        assert f"p: page 2/{attention.pages}" in status
        await pilot.press("p")
        assert attention.page == 2
        heatmap = str(attention.query_one("#attention-heatmap", Static).render())
        assert f"(page 2/{attention.pages})" in heatmap
