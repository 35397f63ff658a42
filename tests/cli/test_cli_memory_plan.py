"""``workbench train`` refusing a run that will not fit in one line, naming the flags that
would make it fit, before any weight or data is read: NLLB-200 3.3B's and Hunyuan-MT-7B's
configs with no weights behind them; with the flags, the run goes past its plan. The plans
themselves are tested in tests/unit/test_memory_plan*.py, and held against measured peaks
in tests/e2e/test_memory_plan*_runs.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers.memory import (
    HUNYUAN_MT_7B,
    HUNYUAN_PARAMETERS,
    NEEDS,
    chat_tokenizer,
    figure_in,
    train_chat,
)
from workbench.core.records.memory import GB
from workbench.core.train.memory.decoder_only import PROMPT_TOKENS


def refused(cli, folder: Path, pairs: Path, tmp_path: Path, *extra: str):
    return cli(
        "train", "--headless", "--model", str(folder), "--data", str(pairs),
        "--source-lang", "en", "--target-lang", "zh", "--batch-size", "16",
        "--memory-budget", "24", "--output-dir", str(tmp_path / "out"), "--no-interact",
        *extra, cwd=tmp_path,
    )  # fmt: skip


def test_a_3b_model_that_will_not_fit_is_refused_in_one_line_naming_lora(
    cli, nllb_3b_folder, pairs_file, tmp_path
):
    result = refused(cli, nllb_3b_folder, pairs_file, tmp_path)
    lines = result.stderr.strip().splitlines()
    assert (result.returncode, len(lines)) == (2, 1), result.stderr[-2000:]
    line = lines[0]
    assert "will not fit" in line
    assert "--lora" in line
    assert figure_in(NEEDS, line) > 53  # 16 bytes a parameter alone: 53.5 GB
    # Before any weight was looked for: no data read, no run folder, no weights error.
    assert "[data]" not in result.stdout
    assert not (tmp_path / "out" / "runs").exists()


def test_with_lora_the_3b_plan_is_smaller(cli, nllb_3b_folder, pairs_file, tmp_path):
    full = refused(cli, nllb_3b_folder, pairs_file, tmp_path)
    lora = refused(cli, nllb_3b_folder, pairs_file, tmp_path, "--lora")
    assert figure_in(NEEDS, lora.stderr) < figure_in(NEEDS, full.stderr)


@pytest.fixture(scope="module")
def hunyuan_folder(tmp_path_factory, family_models) -> Path:
    """Hunyuan-MT-7B's config.json and a chat tokenizer, and no weights."""
    folder = tmp_path_factory.mktemp("hunyuan-mt-7b")
    chat_tokenizer(family_models, folder)
    (folder / "config.json").write_text(json.dumps(HUNYUAN_MT_7B, indent=2), encoding="utf-8")
    return folder


def test_hunyuan_mt_7b_without_lora_is_refused_in_one_line_naming_lora(
    cli, hunyuan_folder, pairs_file, tmp_path
):
    result = train_chat(cli, hunyuan_folder, pairs_file, tmp_path)
    lines = result.stderr.strip().splitlines()
    assert (result.returncode, len(lines)) == (2, 1), result.stderr[-2000:]
    line = lines[0]
    assert "will not fit" in line
    # bf16 weights, gradients and AdamW moments: 8 bytes a parameter before activations
    assert figure_in(NEEDS, line) > 8 * HUNYUAN_PARAMETERS / GB
    assert f"batch 8 × {PROMPT_TOKENS + 256} tokens (prompt {PROMPT_TOKENS} + 128 + 128)" in line
    assert re.search(r"pass --lora --gradient-checkpointing \(about 2\d\.\d GB\)", line), line
    # Before any weight was looked for: no data read, no run folder.
    assert "[data]" not in result.stdout
    assert not (tmp_path / "out" / "runs").exists()


def test_with_lora_checkpointing_and_bf16_the_run_goes_past_its_plan(
    cli, hunyuan_folder, pairs_file, tmp_path
):
    """Accepted: the plan is printed and the run goes on until it looks for the weights
    this folder does not have."""
    flags = ("--lora", "--lora-rank", "16", "--gradient-checkpointing", "--bf16")
    result = train_chat(cli, hunyuan_folder, pairs_file, tmp_path, *flags)
    assert "will not fit" not in result.stderr
    plan = re.search(r"memory plan \(LoRA rank 16 on q_proj, v_proj; (.*)\)", result.stdout)
    assert plan is not None, result.stdout[-2000:]
    assert plan.group(1).startswith("batch 8 × 296 tokens (prompt 40 + 128 + 128), bf16")
    planned = re.search(r"about ([\d.]+) GB at a step's peak, against 24.0 GB", result.stdout)
    assert planned is not None
    assert float(planned.group(1)) <= 24
    assert "model.safetensors" in result.stderr  # the weights, looked for only now
