"""The Lab pane: each study run from the pane on the tiny model, stopped, and its kinds cycled.

The tests that train (or build), split from tests/tui/test_tui_lab.py, whose other tests do not.
"""

from __future__ import annotations

import json

from textual.widgets import Input

from tests.helpers.lab import RUN_NAME, run_study, shown, status
from tests.helpers.tui import show_pane
from workbench.core.run_folder.layout import RunFolder
from workbench.tui.widgets.lab_pane import LabPane


async def test_decoding_study_with_a_limit_shows_the_table_and_saves(lab_app):
    app, run = lab_app
    async with app.run_test(size=(120, 36)) as pilot:
        await show_pane(pilot, "lab")
        pane = app.query_one(LabPane)
        pane.query_one("#lab-limit", Input).value = "3"
        pane = await run_study(pilot, "d")
        assert pane.shown == "decoding", status(pane)
        assert "decoding strategies on the first 3 sentences" in shown(pane)
        for name in ("greedy", "beam 8", "temperature 1.3"):
            assert name in shown(pane)
        study_file = RunFolder(run).lab_study("decoding")
        assert f"saved out/runs/{RUN_NAME}/{study_file.name}" in status(pane)
        saved = json.loads(study_file.read_text(encoding="utf-8"))
        assert saved["size"] == 3
        assert len(saved["results"]) == 9


async def test_cache_study_shows_the_formula_table_and_saves(lab_app):
    app, run = lab_app
    async with app.run_test(size=(120, 36)) as pilot:
        pane = await run_study(pilot, "c")
        assert pane.shown == "cache", status(pane)
        assert "formula and measured cache agree at every t" in shown(pane)
        assert RunFolder(run).lab_study("cache").is_file()
