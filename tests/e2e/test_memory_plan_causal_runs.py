"""The memory plan of a decoder-only (causal LM) translator: parameters counted from the config
alone as transformers and peft build them; Hunyuan-MT-7B refused on a 24 GB card without LoRA,
in one line naming the flags that fit, before any data is read; and the plan of one sequence of
prompt, source and target held against a real run's peak on the CPU.

The tests that train (or build), split from tests/unit/test_memory_plan_causal.py, whose other
tests do not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.memory import (
    PEAK_OF_CHILD,
    PLANNED,
    chat_tokenizer,
    figure_in,
    write_long_pairs,
)
from workbench.core.records.memory import GB


@pytest.fixture(scope="module")
def mid_causal_model(tmp_path_factory, family_models) -> Path:
    """A 41.6M-parameter Qwen3 (8 layers, 512 wide, 8 heads of 64, 4 key-value heads, a
    32,000-row vocabulary tied to the output) in fp32, with a chat tokenizer: its step,
    not the libraries, sets the peak, and the logits weigh as an LLM's do."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen3Config

    folder = tmp_path_factory.mktemp("mid-qwen3")
    chat_tokenizer(family_models, folder)
    config = Qwen3Config(
        hidden_size=512, num_hidden_layers=8, num_attention_heads=8, num_key_value_heads=4,
        head_dim=64, intermediate_size=1536, vocab_size=32_000, tie_word_embeddings=True,
        max_position_embeddings=1024, bos_token_id=0, pad_token_id=1, eos_token_id=2,
    )  # fmt: skip
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def long_pairs(tmp_path_factory, hsk_pairs) -> Path:
    """Pairs of 8 sentences each (as tests/test_memory_plan.py's): longer than 64 tokens,
    so every batch is 16 × (prompt + 64 + 64)."""
    return write_long_pairs(tmp_path_factory.mktemp("long-causal-data") / "long.tsv", hsk_pairs)


def test_the_causal_plan_holds_against_the_measured_peak_on_the_cpu(
    mid_causal_model, long_pairs, tmp_path
):
    """Full fine-tuning of the 41.6M Qwen3 at batch 16 × (prompt + 64 + 64) tokens: the
    plan against the whole run's peak resident memory, measured. Measured here: 3.68 GB
    against 3.8 planned (and --lora 3.28 against 3.1, --lora --gradient-checkpointing 2.46
    against 2.4, --gradient-checkpointing 2.87 against 2.9)."""
    command = [
        sys.executable, "-c", PEAK_OF_CHILD, sys.executable, "-m", "workbench",
        "train", "--headless", "--model", str(mid_causal_model), "--data", str(long_pairs),
        "--source-lang", "en", "--target-lang", "zh", "--prompt", "chat", "--samples", "0",
        "--epochs", "1", "--batch-size", "16", "--max-source-length", "64",
        "--max-target-length", "64", "--max-new-tokens", "4", "--num-beams", "1",
        "--eval-batch-size", "8", "--num-proc", "1", "--no-clean",
        "--output-dir", str(tmp_path / "out"), "--no-interact",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    measured = int(done.stdout.split()[-1])
    planned = figure_in(PLANNED, done.stderr) * GB
    assert "(prompt 40 + 64 + 64)" in done.stderr
    run = next((tmp_path / "out" / "runs").iterdir())
    assert json.loads((run / "summary.json").read_text())["status"] == "finished"
    assert 0.8 <= measured / planned <= 1.25, (measured / GB, planned / GB)
