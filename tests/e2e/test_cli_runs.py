"""The command line as a user meets it: help, errors, and a small real demo run.

The tests that train (or build), split from tests/cli/test_cli.py, whose other tests do not.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers.cli import TINY_DEMO_ARGS, CommandLine
from tests.helpers.runs import TINY_MODEL_SETTINGS
from workbench.core.config.build import build_config

TINY_RUN = """
samples = 450
epochs = 6
batch_size = 32
logging_steps = 5
max_new_tokens = 24
scratch_d_model = 64
scratch_layers = 1
scratch_heads = 2
scratch_ffn_dim = 128
scratch_source_vocab = 500
scratch_target_vocab = 2000
"""

#: The run's learning rate, given as a flag over the demo preset's.
LEARNING_RATE = "5e-3"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory):
    """One small real `train --headless --preset demo`: its settings from the TOML file,
    its learning rate from a flag, a cache of its own (a module fixture is set up before
    the autouse private cache)."""
    work = tmp_path_factory.mktemp("demo_run")
    (work / "tiny.toml").write_text(TINY_RUN, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        cache = str(tmp_path_factory.mktemp("demo_run_cache"))
        result = CommandLine(patch)(
            *TINY_DEMO_ARGS, "--lr", LEARNING_RATE, cwd=work, env={"WORKBENCH_CACHE": cache}
        )
    return work, result


def test_demo_run_end_to_end(demo_run):
    work, result = demo_run
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "Traceback" not in result.stderr
    for epoch in range(1, 7):
        assert f"epoch {epoch} done: BLEU" in out
    for split in ("validation", "test"):
        assert f"before fine-tuning, {split} (10% held out, seed 42, 45): BLEU" in out
        assert f"after fine-tuning,  {split} (10% held out, seed 42, 45): BLEU" in out
    # The closing lines: each number with its set, interval and paired test.
    assert re.search(
        r"^  test \(10% held out, seed 42, 45\): BLEU [\d.]+ → [\d.]+ "
        r"\([+-][\d.]+, 95% CI [+-][\d.]+…[+-][\d.]+, p [<=] [\d.]+\)",
        out,
        re.M,
    )
    assert "95% CI before: BLEU" in out
    assert "sacreBLEU paired bootstrap" in out
    assert out.count("     reference: ") == 5
    assert out.count("     after:     ") == 5
    runs = list((work / "translation_output" / "runs").iterdir())
    assert len(runs) == 1
    run = runs[0]
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert sum(r["event"] == "EvalDone" and r["stage"] == "epoch" for r in records) == 6
    assert any(r["event"] == "TrainStep" for r in records)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["test"]["size"] == summary["validation"]["size"] == 45
    assert summary["train_pairs"] == 360
    assert summary["test_pairs"] == 45
    assert "best_model" in summary
    assert summary["status"] == "finished"
    assert len(summary["samples"]) == 5
    assert (work / summary["best_model"] / "config.json").is_file()
    config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    demo = build_config("demo")
    assert config["preset"] == "demo"
    assert config["learning_rate"] == float(LEARNING_RATE) != demo.learning_rate  # the flag's
    assert (config["epochs"], config["samples"]) == (6, 450) != (demo.epochs, demo.samples)


def test_after_translations_are_what_workbench_translate_prints(cli, demo_run):
    """ "After" is decoded by the saved best model, as `workbench translate` loads it."""
    work, result = demo_run
    assert result.returncode == 0
    run = next((work / "translation_output" / "runs").iterdir())
    rows = [
        json.loads(line)
        for line in (run / "test_translations.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    printed = cli(
        "translate",
        "--model",
        str(run / "best_model"),
        cwd=work,
        input="".join(r["source"] + "\n" for r in rows),
    )
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.splitlines() == [r["after"] for r in rows]


def test_translate_after_demo_answers_in_chinese(cli, demo_run):
    work, result = demo_run
    assert result.returncode == 0
    answer = cli("translate", cwd=work, input="I like to drink tea.\n\nHello.\n")
    assert answer.returncode == 0, answer.stderr
    lines = answer.stdout.split("\n")
    assert lines[1] == ""  # empty input line keeps its place
    assert any("\u4e00" <= ch <= "\u9fff" for ch in lines[0]), answer.stdout


def test_interact_reads_lines_and_keeps_history(cli, demo_run):
    work, _ = demo_run
    session = cli("interact", cwd=work, input="I like tea.\n\n   \n[/bold]\n:q\n")
    assert session.returncode == 0, session.stderr
    assert session.stdout.count("zh> ") == 2
    history = work / "translation_output" / "console_history.jsonl"
    rows = [json.loads(line) for line in history.read_text(encoding="utf-8").splitlines()]
    assert [r["source"] for r in rows] == ["I like tea.", "[/bold]"]


def test_translate_survives_binary_garbage(cli, demo_run):
    work, _ = demo_run
    result = cli("translate", cwd=work, input=b"\xff\xfe\x00garbage\x80\nI like tea.\n")
    assert result.returncode == 0
    assert len(result.stdout.splitlines()) == 2


def test_a_30_pair_file_trains_with_the_demo_preset(cli, tmp_path: Path):
    """The scratch vocabularies shrink to what 24 training pairs support, with one line.

    The preset's vocabularies are asked for; its model is the tiny one, decoded greedily,
    as the vocabularies and the lines checked do not depend on the model's size."""
    from tests.helpers.data import cleaned_hsk_pairs

    pairs = cleaned_hsk_pairs()
    (tmp_path / "pairs.tsv").write_text(
        "en\tzh\n" + "".join(f"{p.source}\t{p.target}\n" for p in pairs[:30]), encoding="utf-8"
    )
    model = {k: v for k, v in TINY_MODEL_SETTINGS.items() if not k.endswith("_vocab")}
    (tmp_path / "tiny.toml").write_text(
        "".join(f"{k} = {v!r}\n" for k, v in {**model, "num_beams": 1}.items()), encoding="utf-8"
    )
    result = cli(
        "train",
        "--headless",
        "--preset",
        "demo",
        "--config",
        "tiny.toml",
        "--data",
        "pairs.tsv",
        "--epochs",
        "2",
        "--no-interact",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "24 train / 3 validation" in result.stdout
    assert re.search(
        r"vocabularies of \d+ source / \d+ target pieces \(asked for 2,000 / "
        r"2,000\): the 24 training pairs support no more",
        result.stdout,
    )
    assert re.search(r"^  test \(10% held out, seed 42, 3\): BLEU", result.stdout, re.M)
