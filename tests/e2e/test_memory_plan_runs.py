"""The memory plan: from the config alone, before any weight is loaded; held against the peak
resident memory of real ``workbench train`` runs on the CPU; and the one-line refusal of a run
that will not fit, naming the flags that would make it.

The tests that train (or build), split from tests/unit/test_memory_plan.py, whose other tests do
not.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.memory import PEAK_OF_CHILD, PLANNED, figure_in, write_long_pairs
from workbench.core.records.memory import GB


@pytest.fixture(scope="module")
def mid_model(tmp_path_factory, family_models) -> Path:
    """A 44.8M-parameter NLLB (6 + 6 layers, 512 wide) with the tiny NLLB's tokenizer:
    large enough that its step, not the libraries, sets the peak."""
    from transformers import AutoConfig, AutoModelForSeq2SeqLM

    folder = tmp_path_factory.mktemp("mid-nllb")
    shutil.copytree(family_models["nllb"], folder, dirs_exist_ok=True)
    config = AutoConfig.from_pretrained(folder)
    config.update(
        {"d_model": 512, "encoder_layers": 6, "decoder_layers": 6, "encoder_ffn_dim": 2048,
         "decoder_ffn_dim": 2048, "encoder_attention_heads": 8, "decoder_attention_heads": 8,
         "encoder_layerdrop": 0.0, "decoder_layerdrop": 0.0}
    )  # fmt: skip
    AutoModelForSeq2SeqLM.from_config(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def long_pairs(tmp_path_factory, hsk_pairs) -> Path:
    """Pairs of 8 sentences each: longer than 64 tokens, so every batch is 16 × 64/64."""
    return write_long_pairs(tmp_path_factory.mktemp("long-data") / "long.tsv", hsk_pairs)


@pytest.mark.parametrize(
    "flags", [(), ("--lora",), ("--lora", "--gradient-checkpointing")], ids=" ".join
)
def test_the_plan_holds_against_the_measured_peak_on_the_cpu(
    mid_model, long_pairs, tmp_path, flags
):
    """The plan of a step, against the peak resident memory of the whole run, measured."""
    command = [
        sys.executable, "-c", PEAK_OF_CHILD, sys.executable, "-m", "workbench",
        "train", "--headless", "--model", str(mid_model), "--data", str(long_pairs),
        "--source-lang", "en", "--target-lang", "zh", "--samples", "0", "--epochs", "1",
        "--batch-size", "16", "--max-source-length", "64", "--max-target-length", "64",
        "--max-new-tokens", "4", "--num-beams", "1", "--eval-batch-size", "8",
        "--num-proc", "1", "--no-clean", "--output-dir", str(tmp_path / "out"),
        "--no-interact", *flags,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    measured = int(done.stdout.split()[-1])
    planned = figure_in(PLANNED, done.stderr) * GB
    run = next((tmp_path / "out" / "runs").iterdir())
    assert json.loads((run / "summary.json").read_text())["status"] == "finished"
    assert 0.8 <= measured / planned <= 1.25, (measured / GB, planned / GB)
