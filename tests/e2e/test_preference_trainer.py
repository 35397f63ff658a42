"""``--objective cpo|dpo``'s Trainer (workbench.core.train.preference_trainer) training a
tiny seq2seq model (Marian) and a tiny decoder-only one (Qwen3), fully and with LoRA
adapters, on a toy preference set: each reference preferred over another sentence's
translation.

The loss must go down, and DPO's first step must score log 2: the policy is its reference
before it trains (a frozen copy, or the same model with its adapters off). The models are
loaded without dropout, so that the policy's forward is the reference's.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import pytest

OBJECTIVES = ("cpo", "dpo")


def load(
    kind: str, tiny_model_dir: Path, causal_models: dict[str, Path]
) -> tuple[Path, Any, Any, Any]:
    """The model's folder, the model (without dropout), its tokenizer and its direction."""
    from workbench.core.languages import Direction

    if kind == "seq2seq":
        from transformers import AutoTokenizer, MarianMTModel

        marian = MarianMTModel.from_pretrained(tiny_model_dir, dropout=0.0, attention_dropout=0.0)
        return tiny_model_dir, marian, AutoTokenizer.from_pretrained(tiny_model_dir), Direction()
    from transformers import AutoModelForCausalLM

    from tests.helpers.causal_models import english_to_chinese

    tokenizer, direction = english_to_chinese(causal_models["qwen3"])
    model = AutoModelForCausalLM.from_pretrained(causal_models["qwen3"], attention_dropout=0.0)
    return causal_models["qwen3"], model, tokenizer, direction


def train_on_preferences(
    tmp_path: Path, hsk_pairs, loaded: Any, tokenizer: Any, direction: Any, **settings: Any
) -> list[float]:
    """The logged training losses of 12 steps on one batch of 8 preference rows."""
    from tests.helpers.runs import tiny_config
    from workbench.core.train.lora import with_adapters
    from workbench.core.train.preference_trainer import build_preference_trainer, reference_model
    from workbench.core.train.run_model import configure_generation, resolve_precision

    config = tiny_config(
        output_dir=str(tmp_path / "run"),
        epochs=12.0,
        warmup_ratio=0.0,
        batch_size=8,
        eval_batch_size=8,
        logging_steps=1,
        max_new_tokens=8,
        **settings,
    )
    model = loaded
    configure_generation(model, config)
    if config.lora:
        model = with_adapters(model, config)
    reference = reference_model(model, config.lora) if config.objective == "dpo" else None
    pairs = hsk_pairs[:8]  # one batch: every step sees the same pairs
    # Each reference preferred over the next pair's translation.
    rows = [(p.source, p.target, pairs[(i + 1) % 8].target) for i, p in enumerate(pairs)]
    trainer = build_preference_trainer(
        config,
        model,
        tokenizer,
        rows,
        list(hsk_pairs[40:44]),
        tmp_path / "run",
        resolve_precision(config, "cpu"),
        direction=direction,
        reference=reference,
    )
    trainer.train()
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert all("rewards/accuracies" in entry and "rewards/margins" in entry for entry in logs)
    assert all(("nll_loss" in entry) == (config.objective == "cpo") for entry in logs)
    assert any("eval_bleu" in entry for entry in trainer.state.log_history)  # judged as any run
    return [entry["loss"] for entry in logs]


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("kind", ["seq2seq", "decoder-only"])
@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_the_preference_loss_goes_down(
    tmp_path, hsk_pairs, tiny_model_dir, causal_models, kind, lora, objective
):
    folder, model, tokenizer, direction = load(kind, tiny_model_dir, causal_models)
    losses = train_on_preferences(
        tmp_path,
        hsk_pairs,
        model,
        tokenizer,
        direction,
        model=str(folder),
        objective=objective,
        lora=lora,
        learning_rate=3e-2 if lora else 3e-3,
        lora_dropout=0.0,
        lr_scheduler="constant",
    )
    assert len(losses) == 12
    if objective == "dpo":
        assert losses[0] == pytest.approx(math.log(2), abs=1e-5)
    # One fixed batch, no dropout: the loss falls step after step (LoRA's slowly).
    assert all(later <= earlier + 1e-3 for earlier, later in itertools.pairwise(losses)), losses
    assert losses[-1] < losses[0] * 0.995, losses
