"""Odd console input in ``interact`` and ``translate``: no crash, an answer or a notice.

The TUI console gets the same inputs in tests/tui/test_tui_faults.py.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import command_env, run_cli
from tests.helpers.comet import GOOD
from tests.helpers.data import ODD_INPUT
from tests.helpers.hub import hub_env
from tests.helpers.hub_repos import OPUS_DE_MODEL
from workbench.cli.interact import answer_lines, run_console
from workbench.cli.translate import run_pipe
from workbench.core.decoding import DecodeOptions
from workbench.core.translate.console_session import ConsoleModel, ConsoleSession
from workbench.core.translate.judgements import Judgement
from workbench.core.translate.translator import Translator
from workbench.errors import WorkbenchError

GARBAGE = b"\xff\xfe\x00\x80garbage\xc3\x28 \xed\xa0\x80"  # invalid UTF-8, an encoded surrogate


def test_interact_session_takes_everything_and_goes_on(tiny_model_dir: Path, tmp_path: Path):
    model = ConsoleModel(str(tiny_model_dir), device="cpu", num_beams=1, max_new_tokens=8)
    lines = ["", "   ", *ODD_INPUT, "I like tea.", ":q", "never read"]
    out = io.StringIO()
    history = tmp_path / "history.jsonl"
    code = run_console(
        ConsoleSession({"model": model}, history),
        stdin=io.StringIO("\n".join(lines) + "\n"),
        stdout=out,
    )
    assert code == 0
    text = out.getvalue()
    # The tiny model translates en -> zh: each line read is asked with "en> ", each
    # translation answered with "zh> " (blanks skipped, :q ends it).
    assert text.count("en> ") == len(lines) - 1
    assert text.count("zh> ") == len(ODD_INPUT) + 1
    assert "note: " in text
    assert "parts" in text
    assert "truncated" in text
    assert "never read" not in text
    rows = [json.loads(r) for r in history.read_text(encoding="utf-8").splitlines()]
    assert [r["source"] for r in rows][-1] == "I like tea."
    assert len(rows) == len(ODD_INPUT) + 1


def test_pipe_keeps_one_line_per_input_line_even_when_a_line_fails(tiny_model_dir: Path):
    translator = Translator.from_pretrained(str(tiny_model_dir), device="cpu")
    real = translator.translate

    def flaky(text, options=None):
        if text == "explode":
            raise RuntimeError("injected")
        return real(text, options)

    translator.translate = flaky  # type: ignore[method-assign]
    out, err = io.StringIO(), io.StringIO()
    assert (
        run_pipe(
            translator,
            ["a cat", "explode", "", "a dog"],
            DecodeOptions(1, 4),
            stdout=out,
            stderr=err,
        )
        == 0
    )
    assert len(out.getvalue().splitlines()) == 4
    assert "line 2: could not translate (RuntimeError: injected)" in err.getvalue()


def stdin_bytes() -> bytes:
    lines = [line.encode("utf-8", "surrogatepass") for line in ["", "   ", *ODD_INPUT]]
    return b"\n".join([*lines, GARBAGE, b"I like tea."]) + b"\n"


def test_translate_command_takes_odd_bytes(cli, tiny_model_dir: Path, tmp_path: Path):
    data = stdin_bytes()
    result = cli(
        "translate",
        "--model",
        str(tiny_model_dir),
        "--max-new-tokens",
        "8",
        cwd=tmp_path,
        input=data,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout.split("\n")
    assert len(out) - 1 == data.count(b"\n")  # one output line per input line
    assert out[0] == ""
    assert out[1] == ""
    err = result.stderr
    assert "parts" in err
    assert "truncated" in err
    assert "Traceback" not in err


def test_interact_command_takes_odd_bytes(cli, tiny_model_dir: Path, tmp_path: Path):
    result = cli(
        "interact",
        "--model",
        str(tiny_model_dir),
        "--max-new-tokens",
        "8",
        cwd=tmp_path,
        input=stdin_bytes() + b":q\n",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert out.count("zh> ") == len(ODD_INPUT) + 2
    assert "Traceback" not in out


def test_interact_notices_odd_input_and_judges_the_last_translation(
    cli, tiny_model_dir: Path, tmp_path: Path
):
    model = tmp_path / "out" / "best_model"
    shutil.copytree(tiny_model_dir, model)  # the history goes beside it
    lines = [
        ":judge good",  # nothing translated yet
        "I love pizza 🍕😀!",
        "我喜欢喝茶。",
        ":judge nonsense",
        ':judge omission dropped "yesterday"',
        ":q",
    ]
    result = cli(
        "interact",
        "--model",
        str(model),
        "--max-new-tokens",
        "8",
        cwd=tmp_path,
        input="\n".join(lines) + "\n",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "Judge the last translation: :judge good|omission|error [note]" in out
    assert "nothing to judge yet: translate a sentence first" in out
    unknown = [n for n in out.splitlines() if "the model cannot represent part of the input" in n]
    assert len(unknown) == 2  # the emoji (named), the Han run (as one unknown piece)
    assert "🍕 😀)" in unknown[0]
    assert "unknown token" in unknown[0]
    assert "note: the input looks like zh already (the target language)" in out
    assert "'nonsense' is not a verdict: type :judge good|omission|error [note]" in out
    assert 'judged: has omissions — dropped "yesterday"' in out
    history = tmp_path / "out" / "console_history.jsonl"
    records = [json.loads(r) for r in history.read_text(encoding="utf-8").splitlines()]
    pizza, tea, judgement = records
    assert any("🍕 😀" in n for n in pizza["notices"])
    assert any("looks like zh already" in n for n in tea["notices"])
    assert judgement == {
        "time": judgement["time"],
        "judges": tea["id"],
        "verdict": "omission",
        "note": 'dropped "yesterday"',
    }


def test_interact_on_an_en_de_model_asks_in_english_and_answers_in_german(
    hub_server, tmp_path: Path
):
    """opus-mt-en-de (the opus-en-de preset's model, served by the Hub look-alike): the
    console's prompts are the model's languages, not the demo's en -> zh. A new
    interpreter: the Hub's libraries read its address at import."""
    result = run_cli(
        "interact",
        "--model",
        OPUS_DE_MODEL,
        "--max-new-tokens",
        "4",
        cwd=tmp_path,
        env=hub_env(hub_server, tmp_path),
        input="I like tea.\n:q\n",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.count("en> ") == 2  # the sentence, then :q
    assert result.stdout.count("de> ") == 1
    assert "zh> " not in result.stdout


@pytest.mark.parametrize(
    ("qe", "said"),
    [
        ("nowhere", "does not exist; --qe takes a folder with hparams.yaml"),
        ("regression", "scores against a reference, which a typed sentence has none of"),
    ],
)
def test_interact_refuses_a_qe_folder_before_it_loads_the_translation_model(
    tiny_model_dir: Path, tmp_path: Path, qe: str, said: str
):
    """The --qe folder is looked at first: the one line comes before any model loads (no
    engine imported: torch, transformers, ctranslate2), not after seconds of loading the
    translation model."""
    folder = {"nowhere": tmp_path / "nowhere", "regression": GOOD}[qe]
    code = (
        "import sys\nfrom workbench.cli.main import main\ncode = main(sys.argv[1:])\n"
        "print(code, *(m in sys.modules for m in ('torch', 'transformers', 'ctranslate2')))"
    )
    argv = ["interact", "--model", str(tiny_model_dir), "--qe", str(folder)]
    done = subprocess.run(
        [sys.executable, "-c", code, *argv],
        cwd=tmp_path,
        input="I like tea.\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=command_env(),
    )
    assert done.stdout.split() == ["2", "False", "False", "False"], done.stderr[-2000:]
    (line,) = done.stderr.splitlines()  # one sentence, no traceback
    assert line.startswith("workbench: error: COMET model")
    assert str(folder) in line
    assert said in line
    assert "Unbabel/wmt22-cometkiwi-da" in line  # the fix: a reference-free model
    assert not (tmp_path / "translation_output").exists()  # no history begun


def test_a_history_that_cannot_be_written_mid_session_still_shows_the_translation(
    tiny_model_dir: Path, tmp_path: Path
):
    history = tmp_path / "console_history.jsonl"
    model = ConsoleModel(str(tiny_model_dir), device="cpu", num_beams=1, max_new_tokens=8)
    session = ConsoleSession({"model": model}, history)
    session.check()
    kept = session.translate("I like tea.")
    assert kept.line_id is not None
    assert not kept.history_problem
    history.unlink()
    history.mkdir()  # what was the history file cannot be appended to any more
    lost = session.translate("My brother is a doctor.")
    assert lost.translation.text  # the user sees the translation all the same
    assert lost.line_id is None
    assert lost.history_problem.startswith(f"not kept in {history} (")
    with pytest.raises(WorkbenchError, match="nothing to judge yet"):
        session.judge(Judgement("good"))  # never the older line in its place
    said = answer_lines(lost, "zh> ")
    assert f"  note: that line is not kept in {history} (" in said[-2]
    assert said[-1].startswith(f"zh> {lost.translation.text}   (")
