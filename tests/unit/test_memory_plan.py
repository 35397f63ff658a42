"""The memory plan: from the config alone, before any weight is loaded. It is held against
the peak resident memory of real ``workbench train`` runs on the CPU in
tests/e2e/test_memory_plan_runs.py, and the one-line refusal of a run that will not fit is
in tests/cli/test_cli_memory_plan.py."""

from __future__ import annotations

import pytest

from tests.helpers.memory import NLLB_3B_CONFIG
from tests.helpers.runs import tiny_config
from workbench.core.records.memory import GB
from workbench.core.records.run_records import Precision
from workbench.core.train.memory.plan import estimate, plan_memory
from workbench.errors import WorkbenchError

CPU = Precision("cpu", "fp32", False)


def nllb_3b_config():
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(NLLB_3B_CONFIG)


def test_the_plan_counts_16_bytes_a_parameter_without_lora_and_the_adapters_with_it():
    config = nllb_3b_config()
    budget = (24 * GB, "(--memory-budget)")
    full = estimate(tiny_config(model="x", batch_size=16), config, CPU, budget)
    lora = estimate(tiny_config(model="x", batch_size=16, lora=True), config, CPU, budget)
    assert full.parameters == 3_344_863_232
    assert full.weights + full.gradients + full.optimizer == 16 * full.parameters
    # rank 8 on q_proj and v_proj: 48 self-attention and 24 cross-attention layers, each
    # pair 2 × 8 × (2048 + 2048)
    assert lora.trainable == 72 * 2 * 8 * 4096
    assert lora.optimizer == 8 * lora.trainable


def test_checkpointing_and_bf16_shrink_the_activations():
    config = nllb_3b_config()
    budget = (24 * GB, "")
    base = tiny_config(model="x", batch_size=16, lora=True)
    plain = estimate(base, config, CPU, budget)
    checkpointed = tiny_config(model="x", batch_size=16, lora=True, gradient_checkpointing=True)
    kept = estimate(checkpointed, config, CPU, budget)
    half = estimate(base, config, Precision("cuda", "bf16", True), budget)
    assert kept.activations < plain.activations / 2
    assert half.activations < plain.activations


def test_a_run_that_does_not_fit_is_told_the_cheapest_flags_that_would():
    plan = plan_memory(
        tiny_config(model="x", batch_size=16, memory_budget=24), nllb_3b_config(), CPU
    )
    assert not plan.fits
    assert plan.fix is not None
    assert plan.fix.flags == ("--lora", "--gradient-checkpointing")
    assert plan.fix.total <= 24 * GB


def test_unknown_lora_targets_are_one_line_listing_the_layers_there_are():
    with pytest.raises(WorkbenchError, match=r"--lora-targets names query.*are: .*q_proj"):
        estimate(
            tiny_config(model="x", lora=True, lora_targets="query"), nllb_3b_config(), CPU, (GB, "")
        )


def test_a_family_with_no_default_targets_asks_for_them():
    from transformers import BartConfig

    small = BartConfig(d_model=16, encoder_layers=1, decoder_layers=1, vocab_size=100)
    with pytest.raises(WorkbenchError, match="pass --lora-targets"):
        estimate(tiny_config(model="x", lora=True), small, CPU, (GB, ""))


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"model": "scratch", "lora": True}, "scratch model starts from random weights"),
        ({"model": "x", "lora": True, "average_checkpoints": 2}, "drop one of the two"),
        ({"model": "x", "lora_rank": 0}, "lora_rank must be a positive"),
        ({"model": "x", "lora_dropout": 1.0}, r"lora_dropout must be in \[0, 1\)"),
        ({"model": "x", "memory_budget": -1.0}, "memory_budget must be >= 0"),
    ],
)
def test_lora_settings_that_cannot_work_are_refused(values, message):
    with pytest.raises(WorkbenchError, match=message):
        tiny_config(**values)


# ------------------------------------------------------------------ against a measured peak


def test_the_training_pane_line_shows_the_lora_setting():
    from workbench.core.views.training_text import settings_line

    line = settings_line(tiny_config(model="x", lora=True, gradient_checkpointing=True))
    assert "LoRA rank 8, alpha 16 · gradient checkpointing" in line


def test_a_sweep_searches_the_adapters_rank_and_alpha():
    from workbench.core.experiments.sweep.space import parse_space

    base = tiny_config(model="x", lora=True)
    space = parse_space(base, [], ["rank=choice:8,16", "alpha=choice:16,32"])
    assert [(d.name, d.values) for d in space.dimensions] == [
        ("lora_rank", (8, 16)),
        ("lora_alpha", (16, 32)),
    ]
