"""The memory plan of a decoder-only (causal LM) translator: parameters counted from the
config alone as transformers and peft build them, Hunyuan-MT-7B's against a 24 GB card,
and the plan of one sequence of prompt, source and target. The command's refusal is in
tests/cli/test_cli_memory_plan.py, a real run's peak in
tests/e2e/test_memory_plan_causal_runs.py."""

from __future__ import annotations

import pytest

from tests.helpers.memory import (
    HUNYUAN_MT_7B,
    HUNYUAN_PARAMETERS,
)
from tests.helpers.runs import tiny_config
from workbench.core.records.memory import GB
from workbench.core.records.run_records import Precision
from workbench.core.train.memory.plan import estimate, plan_memory

CPU = Precision("cpu", "fp32", False)
BUDGET = (24 * GB, "(--memory-budget)")


def hunyuan_config():
    from transformers import AutoConfig

    return AutoConfig.for_model(**HUNYUAN_MT_7B)


def qwen3_tiny(**overrides):
    """Qwen3-0.6B's proportions in miniature: head_dim × heads ≠ hidden, grouped
    key-value heads, q/k norms, tied embeddings."""
    from transformers import Qwen3Config

    values = dict(
        hidden_size=64, intermediate_size=192, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, head_dim=32, vocab_size=500, tie_word_embeddings=True,
    )  # fmt: skip
    return Qwen3Config(**{**values, **overrides})


def test_with_lora_checkpointing_and_bf16_hunyuan_mt_7b_fits_24_gb():
    config = tiny_config(
        model="x", batch_size=8, eval_batch_size=16, max_source_length=128,
        max_target_length=128, max_new_tokens=128, num_beams=4, lora=True, lora_rank=16,
        lora_alpha=32, gradient_checkpointing=True, bf16=True, memory_budget=24,
    )  # fmt: skip
    plan = plan_memory(config, hunyuan_config(), Precision("cpu", "bf16", False))
    assert plan.fits, plan
    assert plan.fix is None
    # The bf16 weights once (autocast makes no second copy of a bf16 weight), the fp32
    # adapters with their bf16 copies.
    assert plan.weights == 2 * HUNYUAN_PARAMETERS + (4 + 2) * plan.trainable
    # rank 16 on 32 q_proj (4096 → 4096) and 32 v_proj (4096 → 1024)
    assert plan.trainable == 32 * 16 * ((4096 + 4096) + (4096 + 1024))
    assert 20 * GB < plan.total <= 24 * GB


def test_the_plan_counts_a_qwen3_as_transformers_and_peft_build_it():
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    config = qwen3_tiny()
    full = estimate(tiny_config(model="x"), config, CPU, BUDGET)
    lora = estimate(tiny_config(model="x", lora=True), config, CPU, BUDGET)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    assert full.parameters == full.trainable == sum(p.numel() for p in model.parameters())
    adapted = get_peft_model(
        model, LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"])
    )
    trainable, total = adapted.get_nb_trainable_parameters()
    assert (lora.trainable, lora.parameters) == (trainable, total)
    # fp32 weights: 16 bytes a parameter trained; adapters train in fp32 too
    assert full.weights + full.gradients + full.optimizer == 16 * full.parameters
    assert lora.gradients + lora.optimizer == 12 * lora.trainable


def test_a_bf16_checkpoint_trains_in_fp32_but_a_lora_runs_base_stays_bf16():
    """A run loads fp32 weights to train (bf16 ones would round AdamW's updates away):
    16 bytes a parameter on the CPU, as for a seq2seq model; a LoRA run keeps its frozen
    base as the checkpoint stores it, 2 bytes a parameter."""
    from workbench.core.model.architecture import run_dtype

    config = qwen3_tiny(dtype="bfloat16")
    plan = estimate(tiny_config(model="x"), config, CPU, BUDGET)
    assert plan.weights + plan.gradients + plan.optimizer == 16 * plan.parameters
    adapted = estimate(tiny_config(model="x", lora=True), config, CPU, BUDGET)
    assert 2 * adapted.parameters <= adapted.weights < 3 * adapted.parameters  # bf16 base
    assert (run_dtype(config, lora=False), run_dtype(config, lora=True)) == (
        "float32",
        "bfloat16",
    )


def test_the_one_sequence_is_prompt_source_and_target():
    config = qwen3_tiny()
    short = estimate(tiny_config(model="x"), config, CPU, BUDGET, prompt_tokens=10)
    long = estimate(tiny_config(model="x"), config, CPU, BUDGET, prompt_tokens=50)
    assert (short.causal, short.prompt, long.prompt) == (True, 10, 50)
    assert long.activations > short.activations
    checkpointed = estimate(
        tiny_config(model="x", gradient_checkpointing=True), config, CPU, BUDGET
    )
    plain = estimate(tiny_config(model="x"), config, CPU, BUDGET)
    assert checkpointed.activations < plain.activations
    # Generating's cache is counted too, in the activations' place when larger.
    assert plain.decoding > 0
    assert plain.total == pytest.approx(
        plain.weights + plain.gradients + plain.optimizer
        + max(plain.activations, plain.decoding) + plain.runtime
    )  # fmt: skip


def test_the_fixes_for_a_causal_model_do_not_offer_bf16():
    """Autocast keeps a decoder-only step's norms and residual stream in fp32 (measured:
    92% of the fp32 activations): --bf16 does not make its plan smaller."""
    config = tiny_config(model="x", batch_size=16, memory_budget=24)
    plan = plan_memory(config, hunyuan_config(), CPU)
    assert plan.fix is not None
    assert "--bf16" not in plan.fix.flags


# ------------------------------------------------------------------ against a measured peak
