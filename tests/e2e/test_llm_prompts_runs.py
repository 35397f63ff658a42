"""A decoder-only model's prompt and training rows, and the mistakes a user makes with them: each
refused in one line before any run folder exists.

The tests that train (or build), split from tests/unit/test_llm_prompts.py, whose other tests do
not.
"""

from __future__ import annotations

import json
from pathlib import Path


def refused(cli, *args: str, cwd: Path) -> str:
    """Run ``workbench train`` and return its one-line error; no run folder was made."""
    done = cli("train", "--headless", "--output-dir", str(cwd / "out"), *args, cwd=cwd)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert not (cwd / "out" / "runs").exists()
    return lines[0]


def test_each_prompt_mistake_is_one_line_and_nothing_is_made(
    cli, causal_models, pairs_file, tmp_path
):
    data = ("--data", str(pairs_file), "--samples", "0")
    no_source = tmp_path / "no-source.txt"
    no_source.write_text("Translate into {target_lang}:\n", encoding="utf-8")
    line = refused(
        cli,
        "--model",
        str(causal_models["qwen3"]),
        "--prompt-template",
        str(no_source),
        *data,
        cwd=tmp_path,
    )
    assert "has no {source}" in line
    assert no_source.read_text(encoding="utf-8") == "Translate into {target_lang}:\n"

    long = tmp_path / "long.txt"
    long.write_text("Please translate carefully. " * 200 + "{source}", encoding="utf-8")
    line = refused(
        cli,
        "--model",
        str(causal_models["qwen3"]),
        "--prompt-template",
        str(long),
        *data,
        cwd=tmp_path,
    )
    assert "prompt alone takes" in line
    assert "512 positions" in line

    line = refused(
        cli, "--model", str(causal_models["llama"]), "--prompt", "chat", *data, cwd=tmp_path
    )
    assert "--prompt chat needs a chat template" in line
    assert "--prompt alma" in line

    line = refused(cli, "--model", str(causal_models["llama"]), *data, cwd=tmp_path)
    assert "has no chat template, so it needs a prompt" in line


def test_an_encoder_given_as_a_translator_is_refused_in_one_line(
    cli, causal_models, pairs_file, tmp_path
):
    import shutil

    from transformers import BertConfig, BertForMaskedLM

    bert = tmp_path / "bert"
    config = BertConfig(
        vocab_size=1000, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32,
    )  # fmt: skip
    BertForMaskedLM(config).save_pretrained(bert)
    for name in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model"):
        shutil.copy(causal_models["llama"] / name, bert / name)
    before = sorted(p.name for p in bert.iterdir())
    line = refused(
        cli, "--model", str(bert), "--data", str(pairs_file), "--samples", "0", cwd=tmp_path
    )
    assert "model type 'bert'" in line
    assert "encoder" in line
    assert sorted(p.name for p in bert.iterdir()) == before
    assert json.loads((bert / "config.json").read_text())["model_type"] == "bert"
