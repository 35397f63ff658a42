"""Snapshot tests: each pane at a fixed size with fixed data, no clock, no blinking cursor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input

from tests.conftest import scores_block, tiny_config
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.dataset_pane import DatasetPane

SIZE = (100, 30)


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> WorkbenchApp:
    """An app over a fixed saved run; relative paths so the header text is stable."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")  # the tab underline slides otherwise
    run = Path("out/runs/20260101-000000-demo")
    run.mkdir(parents=True)
    summary = {
        "status": "finished", "test": scores_block("test", (0.02, 11.5), (0.3, 14.2)),
        "validation": scores_block("validation", (0.01, 11.9), (0.2, 14.6)),
        "bleu_tokenize": "zh",
        "best_model": "out/best_model", "base_model": "out/runs/x/initial_model",
        "samples": [
            {"source": "I like to drink tea.", "reference": "我喜欢喝茶。", "before": "林林林",
             "after": "我喜欢喝茶。", "bleu_before": 0.0, "bleu_after": 100.0},
            {"source": "[bold]Not markup[/bold]", "reference": "不是标记。", "before": "的",
             "after": "不是。", "bleu_before": 0.0, "bleu_after": 30.3},
        ],
    }
    (run / "summary.json").write_text(json.dumps(summary, ensure_ascii=False), encoding="utf-8")
    return WorkbenchApp(tiny_config(samples=180, output_dir="out"))


async def settle(pilot) -> None:
    """Wait for the data to load and stop every cursor from blinking."""
    dataset = pilot.app.query_one(DatasetPane)
    for _ in range(300):
        if dataset.rows:
            break
        await pilot.pause(0.1)
    for field in pilot.app.query(Input):
        field.cursor_blink = False
    await pilot.pause(0.3)


@pytest.mark.parametrize("key", ["f1", "f2", "f3", "f4", "f5"])
def test_pane_snapshot(snap_compare, app: WorkbenchApp, key: str):
    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.press(key)
        await pilot.pause(0.5)
        for field in pilot.app.query(Input):
            field.cursor_blink = False
        await pilot.pause(0.1)

    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)
