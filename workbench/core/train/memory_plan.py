"""The memory plan: what a run's training step needs, from the model's config alone, held
against the device's memory before any weight is loaded.

Full fine-tuning with AdamW keeps 16 bytes a parameter before any activation (fp32
weights 4, gradients 4, two moments 8): NLLB-200 3.3B needs about 53 GB that way, more than
a 24, 40 or 48 GB card has, and the out-of-memory error used to come minutes into loading.
With LoRA the gradients and moments cover the adapters alone.

The parameter counts are exact (:mod:`workbench.core.model.meta_model`). The activations
are an estimate per layer and token, after Korthikanti et al.'s accounting ("Reducing
Activation Recomputation in Large Transformer Models", 2022) for an encoder-decoder: what
self-attention, cross-attention, the feed-forward block, the layer norms and the dropout
masks keep for the backward pass, the attention scores, and the vocabulary projection's
logits with the softmax and its gradient. ``tests/test_memory_plan.py`` holds the whole
plan against the peak resident memory of a real ``workbench train`` on the CPU.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from workbench.core.config.run_config import RunConfig
from workbench.core.model.architecture import Shape, model_shape
from workbench.core.records.memory import GB, Fix, MemoryPlan, ScorerMemory
from workbench.core.train.run_model import Precision
from workbench.core.views.memory_text import refusal, scorer_refusal
from workbench.errors import WorkbenchError

#: Bytes a parameter takes in fp32, and AdamW's two fp32 moments.
FP32, ADAM_MOMENTS = 4, 8
#: Values a layer keeps for its backward pass, per token and model width: attention (its
#: input, Q, K, V, the output projection's input, a dropout mask) 5.5, the feed-forward
#: block's input and mask 1.5, two layer norms 2 (an encoder layer); a decoder layer adds
#: cross-attention's 3.5 and a third norm's 1.
ENCODER_WIDTHS, DECODER_WIDTHS = 9.0, 13.5
#: Per token and feed-forward width: its activation's input and output.
FFN_WIDTHS = 2.0
#: Per token, head and attended position: the softmax's output, its dropout's, the mask.
SCORE_VALUES = 2.5
#: Per token and model width, for each layer an adapter sits on: the adapter's dropout
#: output, its input copy and their masks (measured here: a forward pass 25% larger with
#: adapters on q_proj and v_proj, on the CPU model of the next note).
ADAPTER_WIDTHS = 4.0
#: The logits, their log-softmax and its gradient, in fp32 (cross-entropy upcasts).
LOGIT_COPIES = 3
#: The framework's own memory: a CUDA context and cuBLAS' workspaces; on the CPU, the
#: process with torch, transformers and datasets imported (a whole run of a 25k-parameter
#: model peaks at 0.51 GB here) and the scratch memory a first training step takes,
#: checkpointing or not (0.45 GB in a 6+6-layer, 44.8M-parameter NLLB at batch 16 × 64/64:
#: its forward pass took 1.07 GB without checkpointing and 0.49 GB with it, against 0.63
#: and 0.04 GB of activations counted).
RUNTIME = {"cuda": 1.0 * GB, "cpu": 1.0 * GB}


def activation_bytes(
    shape: Shape,
    batch: int,
    source: int,
    target: int,
    value_bytes: int,
    checkpointing: bool,
    adapters: tuple[int, int] = (0, 0),
) -> float:
    """What one step's forward pass keeps for its backward pass, at its peak.

    With checkpointing each layer keeps its input alone, and one layer at a time is
    recomputed in full during the backward pass. ``adapters``: LoRA's adapted linear
    layers per encoder and per decoder layer.
    """
    d, f, heads = shape.d_model, shape.ffn_dim, shape.heads
    enc_tokens, dec_tokens = batch * source, batch * target
    encoder_widths = ENCODER_WIDTHS + ADAPTER_WIDTHS * adapters[0]
    decoder_widths = DECODER_WIDTHS + ADAPTER_WIDTHS * adapters[1]
    encoder_layer = enc_tokens * (encoder_widths * d + FFN_WIDTHS * f) + (
        SCORE_VALUES * batch * heads * source * source
    )
    decoder_layer = (
        dec_tokens * (decoder_widths * d + FFN_WIDTHS * f)
        + 2 * enc_tokens * d  # cross-attention's keys and values of the encoder's output
        + SCORE_VALUES * batch * heads * target * (target + source)
    )
    if checkpointing:
        kept = (shape.encoder_layers * enc_tokens + shape.decoder_layers * dec_tokens) * d
        layers = kept + max(encoder_layer, decoder_layer)
    else:
        layers = shape.encoder_layers * encoder_layer + shape.decoder_layers * decoder_layer
    embeddings = (enc_tokens + dec_tokens) * d * 2  # the scaled embeddings and their dropout
    logits = LOGIT_COPIES * dec_tokens * shape.vocab_size * FP32
    return (layers + embeddings) * value_bytes + logits


def adapters_per_layer(model_config: Any, adapted: int) -> tuple[int, int]:
    """Adapted linear layers per encoder and per decoder layer, from their count: the
    decoder's have cross-attention's too (q_proj and v_proj: 2 and 4)."""
    shape = model_shape(model_config)
    layers = shape.encoder_layers + 2 * shape.decoder_layers
    per_layer = -(-adapted // layers) if layers else 0  # rounded up
    return per_layer, 2 * per_layer


def device_budget(config: RunConfig, device: str) -> tuple[float, str]:
    """Bytes the plan is held against, and where that figure comes from."""
    if config.memory_budget:
        return config.memory_budget * GB, "(--memory-budget)"
    if device == "cuda":
        import torch

        free, _total = torch.cuda.mem_get_info()
        return float(free), f"free on {torch.cuda.get_device_name()}"
    import psutil

    return float(psutil.virtual_memory().available), "of RAM available"


def estimate(
    config: RunConfig,
    model_config: Any,
    precision: Precision,
    budget: tuple[float, str],
) -> MemoryPlan:
    """The plan of ``config`` on ``model_config``'s model (no fix looked for)."""
    from workbench.core.model.meta_model import count_parameters
    from workbench.core.train.lora import lora_targets

    targets = lora_targets(config, model_config.model_type) if config.lora else None
    counts = count_parameters(model_config, targets, config.lora_rank)
    mixed = precision.training != "fp32"
    adapters = counts.trainable if config.lora else 0
    what = f"LoRA rank {config.lora_rank} on {', '.join(targets)}" if targets else "every weight"
    return MemoryPlan(
        device=precision.device,
        what=what,
        parameters=counts.total + adapters,
        trainable=counts.trainable,
        # autocast keeps a half-precision copy of each weight it multiplies with
        weights=(counts.total + adapters) * (FP32 + (2 if mixed else 0)),
        gradients=counts.trainable * FP32,
        optimizer=counts.trainable * ADAM_MOMENTS,
        activations=activation_bytes(
            model_shape(model_config),
            config.batch_size,
            config.max_source_length,
            config.max_target_length,
            2 if mixed else FP32,
            config.gradient_checkpointing,
            adapters_per_layer(model_config, counts.adapted_layers) if config.lora else (0, 0),
        ),
        runtime=RUNTIME.get(precision.device, RUNTIME["cpu"]),
        budget=budget[0],
        budget_source=budget[1],
        batch_size=config.batch_size,
        lengths=(config.max_source_length, config.max_target_length),
        precision=precision.training,
        checkpointing=config.gradient_checkpointing,
    )


def _fixes(
    config: RunConfig, precision: Precision
) -> list[tuple[tuple[str, ...], RunConfig, Precision]]:
    """Ways to make a run smaller, cheapest to the run's quality and speed first: LoRA,
    then checkpointing, then bf16 (where the device has it), then halving the batch."""
    steps: list[tuple[str, dict[str, Any]]] = []
    if not config.lora and not config.is_scratch and not config.average_checkpoints:
        steps.append(("--lora", {"lora": True}))
    if not config.gradient_checkpointing:
        steps.append(("--gradient-checkpointing", {"gradient_checkpointing": True}))
    found: list[tuple[tuple[str, ...], RunConfig, Precision]] = []
    flags: tuple[str, ...] = ()
    for flag, change in steps:
        flags, config = (*flags, flag), dataclasses.replace(config, **change)
        found.append((flags, config, precision))
    if precision.training == "fp32" and precision.device in ("cpu", "cuda") and not config.fp16:
        precision = dataclasses.replace(precision, training="bf16")
        flags = (*flags, "--bf16")
        found.append((flags, config, precision))
    batch = config.batch_size
    while batch > 1:
        batch //= 2
        config = dataclasses.replace(config, batch_size=batch)
        found.append(((*flags, f"--batch-size {batch}"), config, precision))
    return found


def plan_memory(config: RunConfig, model_config: Any, precision: Precision) -> MemoryPlan:
    """The run's plan against its device's memory; for a run that does not fit, the
    cheapest flags that would make it (:func:`_fixes`)."""
    budget = device_budget(config, precision.device)
    plan = estimate(config, model_config, precision, budget)
    if plan.fits:
        return plan
    for flags, smaller, arithmetic in _fixes(config, precision):
        try:
            candidate = estimate(smaller, model_config, arithmetic, budget)
        except WorkbenchError:  # --lora on a family with no default targets: not a fix
            continue
        if candidate.fits:
            return dataclasses.replace(plan, fix=Fix(flags, candidate.total))
    return plan


def plan_scorer(config: RunConfig, plan: MemoryPlan) -> ScorerMemory | None:
    """What ``--comet``'s model will take, from its hparams.yaml and encoder config alone
    (fetched now, so a model that cannot be fetched is one line before training); refused
    in one line when it cannot fit: alone, once training has released its model, or with
    ``--select-on comet`` beside the training step of ``plan``."""
    if not config.comet:
        return None
    from workbench.core.comet.plan import scorer_memory
    from workbench.core.comet.scorer import BATCH_SIZE

    tokens = config.max_source_length + config.max_target_length
    budget = (plan.budget, plan.budget_source)
    memory = scorer_memory(config.comet, BATCH_SIZE, tokens, budget)
    if config.select_on == "comet":  # the runtime is counted once
        memory = dataclasses.replace(memory, beside=plan.total - plan.runtime)
    if not memory.fits:
        raise WorkbenchError(scorer_refusal(memory))
    return memory


def check_fits(plan: MemoryPlan, model: str) -> None:
    """Refuse, in one line with the flags that would help, a run that will not fit."""
    if not plan.fits:
        raise WorkbenchError(refusal(plan, model))


def release_model(trainer: Any) -> None:
    """Let go of the trained model and its optimizer state once the best model is saved:
    decoding "after" loads that model from disk, and two copies of a large model (one with
    AdamW's moments) could take more memory than the memory plan's training step."""
    import gc

    import torch

    released: Any = None
    trainer.model = trainer.model_wrapped = released
    trainer.optimizer = trainer.lr_scheduler = released
    trainer.accelerator.free_memory()
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
