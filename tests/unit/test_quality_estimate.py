"""``--qe``: a reference-free score beside each translation of the user's own sentences, in
``interact`` and the Translate pane, kept in the console history and shown in the report
next to the student's own judgement (the fixture CometKiwi-shaped model, offline)."""

from __future__ import annotations

import io
from pathlib import Path

from tests.helpers.comet import KIWI, qe_records
from workbench.cli.interact import run_console
from workbench.cli.options import QE_FLAG, without_flags
from workbench.core.comet.scorer import load_scorer
from workbench.core.translate.console_session import ConsoleModel, ConsoleSession
from workbench.core.translate.quality import QualityEstimator


def test_interact_prints_and_keeps_each_lines_qe_score(tiny_model_dir: Path, tmp_path: Path):
    history = tmp_path / "console_history.jsonl"
    model = ConsoleModel(str(tiny_model_dir), device="cpu", num_beams=1, max_new_tokens=8)
    out = io.StringIO()
    lines = "I like tea.\n:judge good reads well\nMy brother is a doctor.\n:q\n"
    session = ConsoleSession({"model": model}, history, QualityEstimator(str(KIWI), "cpu"))
    run_console(session, stdin=io.StringIO(lines), stdout=out)
    text = out.getvalue()
    assert f"Quality estimate (no reference): COMET-QE ({KIWI})" in text
    made = [r for r in qe_records(history) if "judges" not in r]
    assert len(made) == 2
    scorer = load_scorer(str(KIWI), device="cpu")
    for record in made:
        expected = 100 * scorer.score([record["source"]], [record["translation"]])[0]
        assert record["qe"] == {
            "metric": "COMET-QE",
            "model": str(KIWI),
            "score": round(expected, 2),
        }
        assert f"COMET-QE {record['qe']['score']:.2f}" in text


def test_a_reference_based_model_as_qe_is_said_per_line_and_the_session_goes_on(
    tiny_model_dir: Path, tmp_path: Path
):
    history = tmp_path / "console_history.jsonl"
    model = ConsoleModel(str(tiny_model_dir), device="cpu", num_beams=1, max_new_tokens=8)
    wrong = QualityEstimator(str(KIWI.parent / "regression-mix-sparsemax"), "cpu")
    out = io.StringIO()
    session = ConsoleSession({"model": model}, history, wrong)
    run_console(session, stdin=io.StringIO("I like tea.\n:q\n"), stdout=out)
    assert "note: no QE score for that line" in out.getvalue()
    assert "--qe takes a reference-free model such as Unbabel/wmt22-cometkiwi-da" in out.getvalue()
    (line,) = qe_records(history)
    assert "qe" not in line
    assert line["translation"]


def test_serve_passes_every_run_flag_on_but_qe():
    assert without_flags(["--preset", "demo", "--qe", "--epochs", "2"], [QE_FLAG]) == [
        "--preset",
        "demo",
        "--epochs",
        "2",
    ]
    assert without_flags(["--qe", "M", "--lr", "1"], [QE_FLAG]) == ["--lr", "1"]
    assert without_flags(["--qe=M", "--lr", "1", "--qe"], [QE_FLAG]) == ["--lr", "1"]


def test_a_served_tab_gets_the_run_flags_and_qe_but_not_serves_own():
    import shlex

    from workbench.cli.serve import tab_command

    argv = ["serve", "--port", "8001", "--allow-remote", "--host=0.0.0.0", "--qe", "--lr", "1"]
    assert shlex.split(tab_command(argv))[-5:] == ["workbench", "tui", "--qe", "--lr", "1"]
