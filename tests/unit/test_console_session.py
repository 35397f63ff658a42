"""The console session that ``interact`` and the Translate pane both run through: its paths
checked before any model loads, its models loaded once each, every line, score and
judgement kept in the history."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.comet import GOOD, KIWI
from workbench.core.translate.console_session import ConsoleModel, ConsoleSession
from workbench.core.translate.history import read_history
from workbench.core.translate.judgements import Judgement
from workbench.core.translate.quality import QualityEstimator
from workbench.errors import WorkbenchError


def tiny(folder: Path) -> ConsoleModel:
    return ConsoleModel(str(folder), device="cpu", num_beams=1, max_new_tokens=8)


@pytest.mark.parametrize("mistake", ["model", "qe", "qe needs a reference", "history"])
def test_every_path_is_checked_before_a_model_loads(
    tiny_model_dir: Path, tmp_path: Path, mistake: str
):
    model, qe, history = tiny_model_dir, KIWI, tmp_path / "out" / "console_history.jsonl"
    if mistake == "model":
        model = tmp_path / "no_model"
    elif mistake == "qe":
        qe = tmp_path / "no_kiwi"
    elif mistake == "qe needs a reference":
        qe = GOOD
    else:
        (tmp_path / "out").write_text("a file where the folder goes", encoding="utf-8")
    session = ConsoleSession({"model": tiny(model)}, history, QualityEstimator(str(qe), "cpu"))
    with pytest.raises(WorkbenchError) as refused:
        session.check()
    said = str(refused.value)
    assert "\n" not in said  # one sentence: the value, then the fix
    fix = {
        "model": (f"model folder '{model}' does not exist", "or pass --model"),
        "qe": (f"COMET model folder '{qe}' does not exist", "Unbabel/wmt22-cometkiwi-da"),
        "qe needs a reference": ("scores against a reference", "Unbabel/wmt22-cometkiwi-da"),
        "history": (f"console history '{history}' cannot be written", "make that folder"),
    }[mistake]
    assert all(words in said for words in fix), said
    assert not session.is_loaded()
    assert not history.exists()


def test_a_session_with_two_models_keeps_every_line_and_judgement(
    tiny_model_dir: Path, tmp_path: Path
):
    history = tmp_path / "console_history.jsonl"
    base = tmp_path / "base_model"
    shutil.copytree(tiny_model_dir, base)
    session = ConsoleSession({"tuned": tiny(tiny_model_dir), "base": None}, history)
    session.check()
    with pytest.raises(WorkbenchError, match="no base model yet: train one first"):
        session.translate("I like tea.", "base")
    with pytest.raises(WorkbenchError, match="nothing to judge yet: translate a sentence first"):
        session.judge(Judgement("good"))

    first = session.translate("I like tea.", "tuned")
    assert session.is_loaded("tuned")
    translator = session.load("tuned")
    assert session.load("tuned") is translator  # loaded once, kept
    session.set_model("base", tiny(base))
    assert not session.is_loaded("base")
    second = session.translate("My brother is a doctor.", "base", overrides=(2, 4))
    assert second.translation.text
    assert first.backend == second.backend == "transformers"
    assert first.quality is None
    assert not first.quality_problem

    session.judge(Judgement("error"))  # the newest line: the base model's
    session.judge(Judgement("omission", 'dropped "tea"'), first.line_id)
    session.judge(Judgement("good"), first.line_id)  # a later judgement replaces it

    lines = read_history(history)
    assert [(x.id, x.model, x.source) for x in lines] == [
        (first.line_id, str(tiny_model_dir), "I like tea."),
        (second.line_id, str(base), "My brother is a doctor."),
    ]
    assert [x.judgement for x in lines] == [Judgement("good"), Judgement("error")]
    assert lines[0].translation == first.translation.text
    assert lines[0].backend == "transformers"


def test_a_qe_model_that_cannot_load_turns_qe_off_once_and_the_lines_go_on(
    tiny_model_dir: Path, tmp_path: Path
):
    history = tmp_path / "console_history.jsonl"
    wrong = QualityEstimator(str(GOOD), "cpu")  # scores against a reference
    session = ConsoleSession({"model": tiny(tiny_model_dir)}, history, wrong)
    first = session.translate("I like tea.")
    assert first.quality is None
    assert first.quality_off
    assert "scores against a reference" in first.quality_problem
    second = session.translate("My brother is a doctor.")
    assert (second.quality, second.quality_problem, second.quality_off) == (None, "", False)
    assert [x.translation for x in read_history(history)] == [
        first.translation.text,
        second.translation.text,
    ]


def test_a_scored_line_keeps_its_score_in_the_history(tiny_model_dir: Path, tmp_path: Path):
    history = tmp_path / "console_history.jsonl"
    session = ConsoleSession(
        {"model": tiny(tiny_model_dir)}, history, QualityEstimator(str(KIWI), "cpu")
    )
    session.check()
    answer = session.translate("I like tea.")
    assert answer.quality is not None
    assert answer.quality.model == str(KIWI)
    (line,) = read_history(history)
    assert line.qe == answer.quality
    (record,) = [json.loads(x) for x in history.read_text(encoding="utf-8").splitlines()]
    assert list(record) == [
        "id", "time", "model", "run_dir", "backend", "source", "translation", "seconds",
        "notices", "qe",
    ]  # fmt: skip
    assert record["qe"] == {"metric": "COMET-QE", "model": str(KIWI), "score": line.qe.score}
