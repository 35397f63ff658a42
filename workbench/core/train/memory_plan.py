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
logits with the softmax and its gradient. ``tests/e2e/test_memory_plan_runs.py`` holds the whole
plan against the peak resident memory of a real ``workbench train`` on the CPU.

A decoder-only model (Qwen3, Llama, Gemma, Mistral, Hunyuan-MT) trains on one sequence a
pair, prompt + source + target: :func:`causal_activation_bytes` counts what autograd keeps
in its Llama-like layers, and :func:`causal_decoding_bytes` what evaluation's generating
takes in the activations' place; its weights in the dtype they load in, its adapters in
fp32. ``tests/e2e/test_memory_plan_causal_runs.py`` holds one such plan against a real run's peak
on the CPU; what a GPU adds (kernels' workspaces, fragmentation) is not measured.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from workbench.core.config.run_config import RunConfig
from workbench.core.model.architecture import Shape, model_shape, weight_bytes
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

# ---- decoder-only models. Bytes a token, per layer, of what autograd keeps, counted with
# saved_tensors_hooks on Qwen3- and Llama-shaped layers on the CPU (d 256, 4 heads of 96,
# 2 key-value heads, FFN 768): full fine-tuning 27,696 (fp32) and 16,048 (bf16 weights)
# bytes against 27,664 and 16,016 planned; LoRA on q_proj, v_proj 22,384 and 15,472
# against 22,352 and 15,440. Under autocast with fp32 weights a step keeps 92% (LoRA 96%)
# of the fp32 figure, not half: the norms and the residual stream stay fp32, and each
# projection keeps a bf16 copy of its input; the plan counts the fp32 figure.

#: Tokens allowed for the prompt around the source (a chat template's markers and the
#: instruction: about 20 for Hunyuan-MT's, 30 for Qwen3's chat prompt); the run's own
#: figure, where the caller has it, replaces it (:func:`plan_memory`'s ``prompt_tokens``).
PROMPT_TOKENS = 40
#: An RMSNorm computes in fp32 and keeps its input so, whatever the weights' dtype.
NORM_FP32 = 4
#: SDPA's log-sum-exp, fp32, per head (its kernels keep no attention matrix).
LSE_BYTES = 4
#: The gated feed-forward block's FFN-wide tensors: gate, activation, up and their
#: product (the down projection's input, kept only when its weight trains).
GATED_FFN_TRAINED, GATED_FFN_FROZEN = 4, 3
#: Per input feature of an adapted layer: the fp32 copy of its input and the dropout's
#: mask (4 with dropout 0).
ADAPTER_INPUT_BYTES = 8


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


def causal_layer_bytes(shape: Shape, weight: int, trained: bool) -> float:
    """Bytes a token that one decoder-only layer keeps for its backward pass (its
    adapters' aside), with weights of ``weight`` bytes, ``trained`` (full fine-tuning) or
    frozen (LoRA: a frozen projection keeps no input, a frozen norm no output)."""
    d, q, kv = shape.d_model, shape.query_width, shape.kv_width
    kept = 2 * weight if trained else 0  # the normalised input and the norm's output
    norms = shape.norms * (NORM_FP32 + kept) * d
    qk_norms = (NORM_FP32 + (weight if trained else 0)) * (q + kv) if shape.qk_norm else 0
    attention = weight * 2 * (q + kv) + LSE_BYTES * shape.heads  # q, k, v and the output
    ffn = weight * (GATED_FFN_TRAINED if trained else GATED_FFN_FROZEN) * shape.ffn_dim
    return norms + qk_norms + attention + ffn


def causal_activation_bytes(
    shape: Shape,
    batch: int,
    sequence: int,
    weight: int,
    checkpointing: bool,
    adapters: tuple[int, int, float] = (0, 0, 0.0),
) -> float:
    """What a decoder-only model's step keeps at its peak, over ``batch`` sequences of
    ``sequence`` tokens: every layer's activations (with checkpointing each layer's input
    and one layer recomputed), the final norm, and every position's logits (the model
    projects them all), in fp32 three times as the loss upcasts them. ``adapters``: LoRA's
    adapted layers, their input widths summed, and the bytes each input feature keeps."""
    tokens = batch * sequence
    count, inputs, per_input = adapters
    trained = count == 0
    adapter = tokens * (per_input * inputs + FP32 * count)  # ... and each adapter's A output
    layer = tokens * causal_layer_bytes(shape, weight, trained)
    layers = shape.decoder_layers
    if checkpointing:
        stack = layers * tokens * shape.d_model * weight + layer + adapter / max(1, layers)
    else:
        stack = layers * layer + adapter
    final_norm = tokens * (NORM_FP32 + (2 * weight if trained else 0)) * shape.d_model
    logits = LOGIT_COPIES * tokens * shape.vocab_size * FP32
    return stack + final_norm + logits


def causal_decoding_bytes(shape: Shape, rows: int, prompt: int, new: int, value: int) -> float:
    """What generating takes beside the weights: the key-value cache of ``rows`` sequences
    (the batch times its beams) of ``prompt`` + ``new`` positions, the prefill's widest
    moment in one layer (the gated FFN's three tensors, q, k, v and the output, the
    residual and its norm), and the last position's logits."""
    cache = 2 * shape.decoder_layers * shape.kv_width * value * rows * (prompt + new)
    widths = 3 * shape.ffn_dim + 2 * (shape.query_width + shape.kv_width) + 2 * shape.d_model
    prefill = rows * prompt * widths * value
    logits = LOGIT_COPIES * rows * shape.vocab_size * FP32
    return cache + prefill + logits


def _causal_estimate(
    config: RunConfig,
    model_config: Any,
    shape: Shape,
    counts: Any,
    targets: tuple[str, ...] | None,
    precision: Precision,
    budget: tuple[float, str],
    prompt_tokens: int | None,
) -> MemoryPlan:
    """A decoder-only model's plan: weights as a run loads them (fp32 to fine-tune fully; a
    LoRA run's frozen base as its checkpoint stores it: bf16, with no autocast copy), the
    adapters' gradients and moments in fp32, over one sequence of prompt, source and
    target."""
    weight = weight_bytes(model_config, lora=targets is not None)
    mixed = precision.training != "fp32"
    prompt = PROMPT_TOKENS if prompt_tokens is None else prompt_tokens
    lora = targets is not None
    trained_bytes = FP32 if lora else weight
    # autocast caches a half copy of each fp32 weight that trains (frozen ones it casts
    # layer by layer, and drops)
    copies = 2 if mixed and trained_bytes == FP32 else 0
    adapters = counts.trainable if lora else 0
    what = f"LoRA rank {config.lora_rank} on {', '.join(targets)}" if targets else "every weight"
    sequence = prompt + config.max_source_length + config.max_target_length
    per_input = ADAPTER_INPUT_BYTES if config.lora_dropout > 0 else FP32
    adapted = (counts.adapted_layers, counts.adapted_inputs, per_input) if lora else (0, 0, 0.0)
    rows = config.eval_batch_size * max(config.num_beams, config.eval_num_beams)
    cache_value = 2 if weight == 2 or mixed else FP32
    arithmetic: str = precision.training
    if weight == 2 and not mixed:  # no autocast, yet the step runs in its weights' dtype
        half = "bf16" if "bfloat16" in str(getattr(model_config, "dtype", "")) else "fp16"
        arithmetic = f"{half} weights"
    return MemoryPlan(
        device=precision.device,
        what=what,
        parameters=counts.total + adapters,
        trainable=counts.trainable,
        weights=counts.total * weight + adapters * FP32 + counts.trainable * copies,
        gradients=counts.trainable * trained_bytes,
        optimizer=counts.trainable * 2 * trained_bytes,
        activations=causal_activation_bytes(
            shape, config.batch_size, sequence, weight, config.gradient_checkpointing, adapted
        ),
        runtime=RUNTIME.get(precision.device, RUNTIME["cpu"]),
        budget=budget[0],
        budget_source=budget[1],
        batch_size=config.batch_size,
        lengths=(config.max_source_length, config.max_target_length),
        precision=arithmetic,
        checkpointing=config.gradient_checkpointing,
        causal=True,
        prompt=prompt,
        decoding=causal_decoding_bytes(
            shape, rows, prompt + config.max_source_length, config.max_new_tokens, cache_value
        ),
    )


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
    prompt_tokens: int | None = None,
) -> MemoryPlan:
    """The plan of ``config`` on ``model_config``'s model (no fix looked for).

    ``prompt_tokens``: a decoder-only model's prompt around the source, where the caller
    has measured it (else :data:`PROMPT_TOKENS`)."""
    from workbench.core.model.meta_model import count_parameters
    from workbench.core.train.lora import lora_targets

    targets = lora_targets(config, model_config.model_type) if config.lora else None
    counts = count_parameters(model_config, targets, config.lora_rank)
    shape = model_shape(model_config)
    if shape.causal:
        return _causal_estimate(
            config, model_config, shape, counts, targets, precision, budget, prompt_tokens
        )
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
            shape,
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
    config: RunConfig, precision: Precision, causal: bool = False
) -> list[tuple[tuple[str, ...], RunConfig, Precision]]:
    """Ways to make a run smaller, cheapest to the run's quality and speed first: LoRA,
    then checkpointing, then bf16 (where the device has it; not for a decoder-only model,
    whose activations autocast does not halve), then halving the batch."""
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
    fp32 = precision.training == "fp32" and not config.fp16
    if fp32 and not causal and precision.device in ("cpu", "cuda"):
        precision = dataclasses.replace(precision, training="bf16")
        flags = (*flags, "--bf16")
        found.append((flags, config, precision))
    batch = config.batch_size
    while batch > 1:
        batch //= 2
        config = dataclasses.replace(config, batch_size=batch)
        found.append(((*flags, f"--batch-size {batch}"), config, precision))
    return found


def plan_memory(
    config: RunConfig, model_config: Any, precision: Precision, prompt_tokens: int | None = None
) -> MemoryPlan:
    """The run's plan against its device's memory; for a run that does not fit, the
    cheapest flags that would make it (:func:`_fixes`). ``prompt_tokens``: a decoder-only
    model's measured prompt (else :data:`PROMPT_TOKENS`)."""
    budget = device_budget(config, precision.device)
    plan = estimate(config, model_config, precision, budget, prompt_tokens)
    if plan.fits:
        return plan
    for flags, smaller, arithmetic in _fixes(config, precision, plan.causal):
        try:
            candidate = estimate(smaller, model_config, arithmetic, budget, prompt_tokens)
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
