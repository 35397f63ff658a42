"""The command line as a user meets it: help, errors, and a small real demo run."""

from __future__ import annotations

import time
from pathlib import Path

from tests.helpers.cli import TINY_DEMO_ARGS, imports_of


def test_help_does_not_import_torch():
    """A new interpreter: what a command imports is the point."""
    helped = imports_of("--help", modules=("torch", "numpy", "transformers", "textual", "datasets"))
    assert helped.returncode == 0, helped.stderr
    assert helped.imported == []
    assert "train" in helped.stdout
    assert "interact" in helped.stdout


def test_bad_flag_value_is_one_line(cli, tmp_path: Path):
    result = cli("train", "--headless", "--preset", "demo", "--lr", "-5", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "learning rate" in lines[0]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "translation_output").exists()


def test_offline_hub_preset_fails_fast_with_the_fix(cli, tmp_path: Path):
    started = time.monotonic()
    result = cli(
        "train", "--headless", "--preset", "opus-en-zh", cwd=tmp_path, env={"HF_HUB_OFFLINE": "1"}
    )
    elapsed = time.monotonic() - started
    assert result.returncode != 0
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1, err
    for needle in ("Hugging Face Hub", "HF_ENDPOINT", "--preset demo"):
        assert needle in err
    assert "Traceback" not in err
    assert elapsed < 60  # generous; the real figure is in the README


def test_interact_without_a_model(cli, tmp_path: Path):
    result = cli("interact", cwd=tmp_path, input="hello\n")
    assert result.returncode == 2
    assert "no saved model" in result.stderr
    assert "Traceback" not in result.stderr


def test_translate_missing_model_path(cli, tmp_path: Path):
    result = cli("translate", "--model", "./nowhere", "hi", cwd=tmp_path)
    assert result.returncode == 2
    assert "does not exist" in result.stderr


def test_tui_without_a_terminal_points_to_headless(cli, tmp_path: Path):
    result = cli("tui", "--preset", "demo", cwd=tmp_path, input="")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "train --headless" in lines[0]


def test_a_run_without_a_terminal_says_the_console_was_skipped(cli, tmp_path: Path, fake_training):
    """Piped, the run cannot open the console: it says so in its last line, with the fix;
    the closing lines name the best epoch. The CLI's contract: the stand-in trainer
    (tests/helpers/fake_training.py) finishes a recorded run in place of a real one."""
    from tests.helpers.runs import tiny_toml
    from workbench.cli.train import console_skipped_line

    (tmp_path / "tiny.toml").write_text(tiny_toml(epochs=1), encoding="utf-8")
    args = [a for a in TINY_DEMO_ARGS if a != "--no-interact"]
    result = cli(*args, cwd=tmp_path, input="")
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[-1] == console_skipped_line("translation_output/best_model")
    assert "; best epoch 1 (by validation BLEU); best model: translation_output/best_model" in (
        result.stdout
    )
