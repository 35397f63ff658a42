"""The Lab pane: each study run from the pane on the tiny model, stopped, and its kinds cycled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.lab import RUN_NAME, lab_run, run_study, shown, status
from tests.helpers.runs import small
from tests.helpers.tui import show_pane, wait_for
from workbench.core.run_folder.layout import RunFolder
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.lab_pane import LabPane


async def test_attention_study_shows_each_kind_and_saves(lab_app):
    app, run = lab_app
    async with app.run_test(size=(120, 36)) as pilot:
        pane = await run_study(pilot, "a")
        assert pane.shown == "attention", status(pane)
        study_file = RunFolder(run).lab_study("attention")
        assert f"saved out/runs/{RUN_NAME}/{study_file.name}" in status(pane)
        saved = json.loads(study_file.read_text(encoding="utf-8"))
        assert saved["sentence"] == "I like to drink tea."
        text = shown(pane)
        assert "cross-attention" in text
        assert "per head" in text
        seen = []
        for _ in range(3):
            before = shown(pane)
            await pilot.press("k")
            await wait_for(
                pilot, lambda before=before: shown(pane) != before, what="k shows the next kind"
            )
            seen.append(shown(pane).split("\n")[3])  # the title line of the one map
        assert [
            "encoder self-attention" in seen[0],
            "masked decoder" in seen[1],
            "cross-attention" in seen[2],
        ] == [True, True, True], seen


async def test_stop_ends_a_decoding_study_early(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    # 3 sentences decode 19 times in under a second on the tiny model, before a key can
    # land; 300 sentences (the default limit 200) take long enough to be stopped mid-way.
    monkeypatch.chdir(tmp_path)
    app, run = lab_run(tiny_model_dir, copies=50)
    async with app.run_test(size=(120, 36)) as pilot:
        await show_pane(pilot, "lab")
        pane = app.query_one(LabPane)
        await pilot.press("d", "g")
        await wait_for(pilot, lambda: "/19 ·" in status(pane), what="the first progress")
        await pilot.press("x")
        await wait_for(pilot, lambda: pane.finished == 1, timeout=120, what="the study ended")
        assert "stopped before it finished" in status(pane)
        assert pane.result is None
        assert not RunFolder(run).lab_study("decoding").exists()


async def test_without_a_model_the_pane_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    app = WorkbenchApp(small(Path(".")))
    async with app.run_test(size=(100, 30)) as pilot:
        await show_pane(pilot, "lab")
        pane = app.query_one(LabPane)
        await pilot.press("g")
        await wait_for(
            pilot, lambda: "no fine-tuned model" in status(pane), what="the missing-model line"
        )
        assert not pane.running
        assert app.is_running
