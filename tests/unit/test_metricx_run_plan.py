"""``train --metricx``'s settings and its memory plan: the scorer counted from its
config.json alone, in the dtype its weights were saved in, checked against the budget,
its mode and its tokenizer before training; and the settings refused in one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.comet import GOOD
from tests.helpers.paths import FIXTURES
from tests.helpers.runs import tiny_config
from workbench.core.metricx.scorer import MetricXSettings, load_metricx
from workbench.core.records.memory import GB, MemoryPlan
from workbench.core.train.memory.plan import plan_scorers
from workbench.core.views.memory_text import plan_lines, scorer_line
from workbench.errors import WorkbenchError

TOKENIZER = str(FIXTURES / "metricx" / "tokenizer")


def training_plan(budget_gb: float) -> MemoryPlan:
    """A 1.5 GB training step's plan (1 GB of it the runtime) against ``budget_gb``."""
    return MemoryPlan(
        device="cpu", what="every weight", parameters=1, trainable=1, weights=0.5 * GB,
        gradients=0, optimizer=0, activations=0, runtime=1.0 * GB, budget=budget_gb * GB,
        budget_source="(--memory-budget)", batch_size=16, lengths=(64, 64), precision="fp32",
        checkpointing=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("variant", "dtype", "size"), [("tiny-bf16", "bf16", 2), ("tiny-fp32", "fp32", 4)]
)
def test_the_plan_counts_every_parameter_in_the_dtype_the_weights_were_saved_in(
    metricx_models, variant, dtype, size
):
    model = str(metricx_models[variant])
    (memory,) = plan_scorers(
        tiny_config(metricx=model, metricx_tokenizer=TOKENIZER), training_plan(8.0)
    )
    loaded = load_metricx(MetricXSettings(model, TOKENIZER, device="cpu"))
    parameters = sum(p.numel() for p in loaded.network.parameters())
    assert memory.parameters == parameters  # counted on the meta device, before any weight
    weights = sum(p.numel() * p.element_size() for p in loaded.network.parameters())
    assert weights == parameters * size
    assert memory.bytes > weights + 1.0 * GB  # the weights, the runtime, and the inputs'
    assert memory.metric == "MetricX-24"
    assert memory.dtype == dtype
    assert scorer_line(memory).startswith(
        f"MetricX-24 {model}: {parameters:,} parameters (encoder mT5), about "
    )
    assert f" in {dtype}, loaded once training has released its model" in scorer_line(memory)


def test_comet_and_metricx_each_have_their_line_in_the_plan(metricx_models):
    model = str(metricx_models["tiny-bf16"])
    config = tiny_config(comet=str(GOOD), metricx=model, metricx_tokenizer=TOKENIZER)
    plan = training_plan(8.0)
    scorers = plan_scorers(config, plan)
    assert [s.metric for s in scorers] == ["COMET", "MetricX-24"]
    lines = plan_lines(plan, scorers)
    assert lines[-2].startswith(f"  COMET {GOOD}: ")
    assert lines[-2].endswith(
        " in fp32, loaded once training has released its model, never beside it"
    )
    assert lines[-1].startswith(f"  MetricX-24 {model}: ")
    assert plan_scorers(tiny_config(), plan) == []


def test_a_metricx_model_that_cannot_fit_is_refused_in_one_line(metricx_models):
    model = str(metricx_models["tiny-bf16"])
    with pytest.raises(WorkbenchError) as info:
        plan_scorers(tiny_config(metricx=model, metricx_tokenizer=TOKENIZER), training_plan(0.5))
    message = str(info.value)
    assert f"MetricX-24 model '{model}' will not fit" in message
    assert "parameters in bf16, with the runtime) against 0.50 GB (--memory-budget)" in message
    assert "workbench score --metricx after the run), leave --metricx out" in message


def test_a_qe_checkpoint_or_a_folder_without_its_tokenizer_is_refused_before_training(
    metricx_models, tmp_path: Path
):
    qe = tmp_path / "metricx-23-qe-large-v2p0"
    shutil.copytree(metricx_models["tiny-fp32"], qe)
    with pytest.raises(WorkbenchError, match="is a QE MetricX-23 checkpoint"):
        plan_scorers(tiny_config(metricx=str(qe), metricx_tokenizer=TOKENIZER), training_plan(8.0))
    with pytest.raises(WorkbenchError, match="has no tokenizer in its folder"):
        plan_scorers(tiny_config(metricx=str(metricx_models["tiny-fp32"])), training_plan(8.0))


def test_metricx_settings_without_a_metricx_model_or_with_no_room_are_refused():
    with pytest.raises(WorkbenchError, match="no MetricX model is asked for: add --metricx"):
        tiny_config(metricx_max_length=512)
    with pytest.raises(WorkbenchError, match="no MetricX model is asked for"):
        tiny_config(metricx_tokenizer=TOKENIZER)
    with pytest.raises(WorkbenchError, match="--metricx-max-length 1 leaves no token"):
        tiny_config(metricx="m", metricx_max_length=1)
    assert tiny_config(metricx="m", metricx_max_length="none").metricx_max_length is None
