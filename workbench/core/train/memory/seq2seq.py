"""An encoder-decoder's plan (Marian, NLLB, M2M100, mBART, T5): its weights and AdamW's
state in fp32, and the activations one step keeps for its backward pass.

The parameter counts are exact (:mod:`workbench.core.model.meta_model`). The activations
are an estimate per layer and token, after Korthikanti et al.'s accounting ("Reducing
Activation Recomputation in Large Transformer Models", 2022) for an encoder-decoder: what
self-attention, cross-attention, the feed-forward block, the layer norms and the dropout
masks keep for the backward pass, the attention scores, and the vocabulary projection's
logits with the softmax and its gradient. ``tests/e2e/test_memory_plan_runs.py`` holds the whole
plan against the peak resident memory of a real ``workbench train`` on the CPU.
"""

from __future__ import annotations

from typing import Any

from workbench.core.model.architecture import Shape, model_shape
from workbench.core.records.memory import MemoryPlan
from workbench.core.train.memory.shared import (
    ADAM_MOMENTS,
    FP32,
    LOGIT_COPIES,
    PlanRequest,
    plan_of,
)

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
#: adapters on q_proj and v_proj, on the CPU model of :data:`~.shared.RUNTIME`'s note).
ADAPTER_WIDTHS = 4.0


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


def seq2seq_plan(request: PlanRequest) -> MemoryPlan:
    """An encoder-decoder's plan: every weight in fp32 as the Trainer keeps it (with mixed
    precision also the half copy autocast makes), gradients and AdamW's moments of what
    trains, the activations in the arithmetic of the step."""
    config, counts = request.config, request.counts
    mixed = request.precision.training != "fp32"
    # autocast keeps a half-precision copy of each weight it multiplies with
    copies = (counts.total + request.adapters) * (2 if mixed else 0)
    return plan_of(
        request,
        weights=(counts.total + request.adapters) * FP32 + copies,
        copies=copies,
        gradients=counts.trainable * FP32,
        optimizer=counts.trainable * ADAM_MOMENTS,
        activations=activation_bytes(
            request.shape,
            config.batch_size,
            config.max_source_length,
            config.max_target_length,
            2 if mixed else FP32,
            config.gradient_checkpointing,
            adapters_per_layer(request.model_config, counts.adapted_layers)
            if config.lora
            else (0, 0),
        ),
        precision=request.precision.training,
    )
