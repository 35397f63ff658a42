"""The TUI's Translate and Attention panes decode like the command line.

Both go through the core (:class:`~workbench.core.translate.translator.Translator` and
:func:`~workbench.core.attention.extract.load_attention_model`); this holds pane and CLI to
the same translation and the same matrix. A pane that loads and decodes a model its own way
gives other words for the same sentence (``在在的的的。`` in one pane, ``在在的的了。`` in
another), which only such a comparison shows.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from textual.widgets import Input

from tests.helpers.runs import small
from tests.helpers.tui import wait_for
from workbench.core.attention.extract import load_attention_model
from workbench.core.attention.heatmap import render_plain
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.attention_pane import AttentionPane
from workbench.tui.widgets.translate_pane import TranslatePane

SENTENCE = "I like to drink tea with my friends."


async def test_panes_show_what_workbench_translate_and_attention_print(
    cli, tmp_path: Path, tiny_model_dir: Path
):
    model = tmp_path / "out" / "best_model"
    shutil.copytree(tiny_model_dir, model)
    translated = cli("translate", "--model", str(model), SENTENCE)
    assert translated.returncode == 0
    cli_translation = translated.stdout.strip()
    drawn = cli("attention", "--model", str(model), "--width", "200", SENTENCE)
    assert drawn.returncode == 0
    cli_heatmap = drawn.stdout
    assert f"translation: {cli_translation or '(empty)'}\n" in cli_heatmap

    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("f4")
        translate = app.query_one(TranslatePane)
        field = translate.query_one("#translate-input", Input)
        await wait_for(pilot, lambda: field.display)
        field.value = SENTENCE
        field.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: translate.pending == 0)
        pane_translation = next(iter(translate.entries.values())).translation

        await pilot.press("ctrl+t")  # the same sentence in the Attention pane
        attention = app.query_one(AttentionPane)
        await wait_for(pilot, lambda: attention.result is not None)
        amap = attention.result
        assert amap is not None

    assert pane_translation == cli_translation == amap.translation
    # The pane's default view is the command's default view, cell for cell.
    view = amap.view(
        layer=attention.layer_index, head=attention.head_index, words=attention.merge_words
    )
    direct = load_attention_model(str(model)).map(SENTENCE).view()
    np.testing.assert_array_equal(view.matrix, direct.matrix)
    assert (view.row_labels, view.col_labels) == (direct.row_labels, direct.col_labels)
    grid = render_plain(view.row_labels, view.col_labels, view.matrix, width=200)
    assert grid.strip() in cli_heatmap.replace(" \n", "\n")
