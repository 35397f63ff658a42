"""The Lab pane: each study run from the pane on the tiny model, stopped, and its kinds cycled."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from tests.helpers.runs import small
from tests.helpers.tui import show_pane, wait_for
from workbench.core.lab.attention_kinds import STUDY_FILE as ATTENTION_FILE
from workbench.core.lab.decoding_strategies import STUDY_FILE
from workbench.core.lab.kv_cache import STUDY_FILE as CACHE_FILE
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


def lab_run(tiny_model_dir: Path, copies: int = 1) -> tuple[WorkbenchApp, Path]:
    """An app whose fine-tuned model is the tiny model, trained (it says) by a run whose
    test set is SENTENCES ``copies`` times: what the studies read and where they save."""
    run = Path("out/runs") / RUN_NAME
    run.mkdir(parents=True)
    rows = [
        {"source": s, "reference": "我喜欢茶。", "before": "", "after": ""}
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


async def test_attention_study_shows_each_kind_and_saves(lab_app):
    app, run = lab_app
    async with app.run_test(size=(120, 36)) as pilot:
        pane = await run_study(pilot, "a")
        assert pane.shown == "attention", status(pane)
        assert f"saved out/runs/{RUN_NAME}/{ATTENTION_FILE}" in status(pane)
        saved = json.loads((run / ATTENTION_FILE).read_text(encoding="utf-8"))
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


@pytest.mark.slow
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
        assert f"saved out/runs/{RUN_NAME}/{STUDY_FILE}" in status(pane)
        saved = json.loads((run / STUDY_FILE).read_text(encoding="utf-8"))
        assert saved["size"] == 3
        assert len(saved["results"]) == 9


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
        assert not (run / STUDY_FILE).exists()


@pytest.mark.slow
async def test_cache_study_shows_the_formula_table_and_saves(lab_app):
    app, run = lab_app
    async with app.run_test(size=(120, 36)) as pilot:
        pane = await run_study(pilot, "c")
        assert pane.shown == "cache", status(pane)
        assert "formula and measured cache agree at every t" in shown(pane)
        assert (run / CACHE_FILE).is_file()


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
