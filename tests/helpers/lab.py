"""The Lab over the tiny model: a run folder whose test set is six sentences, the app or the
model that studies it, and a study run from the pane."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from textual.widgets import Static

from tests.helpers.runs import small
from tests.helpers.tui import show_pane, wait_for
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.lab_pane import LabPane

SENTENCES = [
    "I like tea.",
    "He quit smoking.",
    "The bus is here.",
    "Where is the station?",
    "We eat rice.",
    "She reads a book.",
]


RUN_NAME = "20260101-000000-demo"


#: The sentence scores a run writes beside each test sentence (read, not used, by the studies).
NO_SCORES = {"bleu_before": 0.0, "bleu_after": 0.0, "chrf_before": 0.0, "chrf_after": 0.0}


def lab_run(tiny_model_dir: Path, copies: int = 1) -> tuple[WorkbenchApp, Path]:
    """An app whose fine-tuned model is the tiny model, trained (it says) by a run whose
    test set is SENTENCES ``copies`` times: what the studies read and where they save."""
    run = Path("out/runs") / RUN_NAME
    run.mkdir(parents=True)
    rows = [
        {"source": s, "reference": "我喜欢茶。", "before": "", "after": "", **NO_SCORES}
        for s in SENTENCES * copies
    ]
    (run / "test_translations.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    model = Path("out/best_model")
    shutil.copytree(tiny_model_dir, model)
    (model / "workbench.json").write_text(
        json.dumps(
            {"target_label": None, "run_dir": f"out/runs/{RUN_NAME}", "bleu_tokenize": "zh"}
        ),
        encoding="utf-8",
    )
    return WorkbenchApp(small(Path("."))), run


@pytest.fixture
def lab_app(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[WorkbenchApp, Path]:
    """The tiny model and a six-sentence test set, in tmp_path (relative paths)."""
    monkeypatch.chdir(tmp_path)
    return lab_run(tiny_model_dir)


def status(pane: LabPane) -> str:
    return str(pane.query_one("#lab-status", Static).render())


def shown(pane: LabPane) -> str:
    return str(pane.query_one("#lab-result", Static).render())


async def run_study(pilot, key: str) -> LabPane:
    """Open the Lab, choose a study by its key, press Run, wait for it to end."""
    await show_pane(pilot, "lab")
    pane = pilot.app.query_one(LabPane)
    await pilot.press(key)
    await wait_for(
        pilot,
        lambda: pane.study == {"d": "decoding", "c": "cache", "a": "attention"}[key],
        what="chosen",
    )
    await pilot.press("g")
    await wait_for(pilot, lambda: pane.finished == 1, timeout=180, what="the study ended")
    return pane


@pytest.fixture
def run_with_model(tmp_path: Path, tiny_model_dir: Path) -> tuple[Path, Path]:
    """A run folder with a test set, and its model naming it (relative, as training does)."""
    root = tmp_path / "translation_output"
    run = root / "runs" / "20260101-000000-demo"
    run.mkdir(parents=True)
    rows = [
        {"source": s, "reference": "我喜欢茶。", "before": "", "after": "", **NO_SCORES}
        for s in SENTENCES
    ]
    (run / "test_translations.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    model = root / "best_model"
    shutil.copytree(tiny_model_dir, model)
    (model / "workbench.json").write_text(
        json.dumps(
            {
                "target_label": None,
                "run_dir": "translation_output/runs/20260101-000000-demo",
                "bleu_tokenize": "zh",
            }
        ),
        encoding="utf-8",
    )
    return run, model
