"""A decoder-only model's plan (Qwen3, Llama, Gemma, Mistral, Hunyuan-MT): it trains on one
sequence a pair, prompt + source + target.

:func:`causal_activation_bytes` counts what autograd keeps in its Llama-like layers, and
:func:`causal_decoding_bytes` what evaluation's generating takes in the activations' place;
its weights in the dtype they load in, its adapters in fp32.
``tests/e2e/test_memory_plan_causal_runs.py`` holds one such plan against a real run's peak
on the CPU; what a GPU adds (kernels' workspaces, fragmentation) is not measured.

Bytes a token, per layer, of what autograd keeps, counted with saved_tensors_hooks on
Qwen3- and Llama-shaped layers on the CPU (d 256, 4 heads of 96, 2 key-value heads, FFN
768): full fine-tuning 27,696 (fp32) and 16,048 (bf16 weights) bytes against 27,664 and
16,016 planned; LoRA on q_proj, v_proj 22,384 and 15,472 against 22,352 and 15,440. Under
autocast with fp32 weights a step keeps 92% (LoRA 96%) of the fp32 figure, not half: the
norms and the residual stream stay fp32, and each projection keeps a bf16 copy of its
input; the plan counts the fp32 figure.
"""

from __future__ import annotations

from workbench.core.model.architecture import Shape, weight_bytes
from workbench.core.records.memory import MemoryPlan
from workbench.core.train.memory.shared import FP32, LOGIT_COPIES, PlanRequest, plan_of

#: Tokens allowed for the prompt around the source (a chat template's markers and the
#: instruction: about 20 for Hunyuan-MT's, 30 for Qwen3's chat prompt); the run's own
#: figure, where the caller has it, replaces it
#: (:func:`~workbench.core.train.memory.plan.plan_memory`'s ``prompt_tokens``).
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


def decoder_only_plan(request: PlanRequest, prompt_tokens: int | None) -> MemoryPlan:
    """A decoder-only model's plan: weights as a run loads them (fp32 to fine-tune fully; a
    LoRA run's frozen base as its checkpoint stores it: bf16, with no autocast copy), the
    adapters' gradients and moments in fp32, over one sequence of prompt, source and
    target. ``prompt_tokens``: the prompt around the source, where the caller has measured
    it (else :data:`PROMPT_TOKENS`)."""
    config, counts, precision = request.config, request.counts, request.precision
    weight = weight_bytes(request.model_config, lora=request.lora)
    mixed = precision.training != "fp32"
    prompt = PROMPT_TOKENS if prompt_tokens is None else prompt_tokens
    trained_bytes = FP32 if request.lora else weight
    # autocast caches a half copy of each fp32 weight that trains (frozen ones it casts
    # layer by layer, and drops)
    copies = 2 if mixed and trained_bytes == FP32 else 0
    sequence = prompt + config.max_source_length + config.max_target_length
    per_input = ADAPTER_INPUT_BYTES if config.lora_dropout > 0 else FP32
    adapted = (
        (counts.adapted_layers, counts.adapted_inputs, per_input) if request.lora else (0, 0, 0.0)
    )
    rows = config.eval_batch_size * max(config.num_beams, config.eval_num_beams)
    cache_value = 2 if weight == 2 or mixed else FP32
    arithmetic: str = precision.training
    if weight == 2 and not mixed:  # no autocast, yet the step runs in its weights' dtype
        half = "bf16" if "bfloat16" in str(getattr(request.model_config, "dtype", "")) else "fp16"
        arithmetic = f"{half} weights"
    return plan_of(
        request,
        weights=counts.total * weight + request.adapters * FP32 + counts.trainable * copies,
        copies=counts.trainable * copies,
        gradients=counts.trainable * trained_bytes,
        optimizer=counts.trainable * 2 * trained_bytes,
        activations=causal_activation_bytes(
            request.shape,
            config.batch_size,
            sequence,
            weight,
            config.gradient_checkpointing,
            adapted,
        ),
        precision=arithmetic,
        causal=True,
        prompt=prompt,
        decoding=causal_decoding_bytes(
            request.shape,
            rows,
            prompt + config.max_source_length,
            config.max_new_tokens,
            cache_value,
        ),
    )
