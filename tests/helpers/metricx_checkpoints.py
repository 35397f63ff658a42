"""Tiny random MetricX-24 checkpoints, rebuilt from a seed instead of stored in git.

A checkpoint of MetricX-24's shape must hold a 250,112-row embedding and output layer
(the score is the logit of ``<extra_id_10>``, id 250089): about 8 MB of fp32 even at a
model width of 16, for each variant. So the repository keeps only this recipe, the tiny
tokenizer and the expected scores (``tests/fixtures/metricx``); the weights are written
again, identically, wherever they are needed: by ``build_fixtures.py`` in the reference
venv (transformers 4.30, numpy 1.x) and by the tests (transformers 5, numpy 2). Both sides
draw from numpy's legacy ``RandomState``, whose stream numpy keeps fixed across versions,
each tensor from a seed of its own name, and cast to bf16 with torch (the same torch, 2.13,
in both venvs). Only the rows the tiny tokenizer can produce, and the score's output row,
are random; the other rows are zero (no input reaches them).

This module runs in both venvs: numpy, torch and safetensors only, no workbench import.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np

#: The logit MetricX reads: ``<extra_id_10>`` in mT5's vocabulary.
SCORE_ID = 250089
#: mT5's vocabulary, as MetricX-24's configs have it (250,100 ids padded to 250,112).
VOCAB_SIZE = 250112
#: Embedding rows drawn at random: every id the tiny tokenizer gives (its pieces and
#: its 100 ``<extra_id_N>``), with room to spare.
USED_ROWS = 1700
#: The score's output row is ``SCALE * N(0, 1) + SHIFT``: chosen (by looking at the
#: tiny models' outputs) so that scores spread over about 3-23, not piled at a clip.
SCORE_ROW_SCALE, SCORE_ROW_SHIFT = 3.0, -2.0

#: The shape of MetricX-24 (mT5: gated GELU, relative position buckets, untied output
#: layer) at a tiny width.
CONFIG: dict[str, Any] = {
    "architectures": ["MT5ForRegression"],
    "model_type": "mt5",
    "vocab_size": VOCAB_SIZE,
    "d_model": 16,
    "d_kv": 8,
    "d_ff": 32,
    "num_layers": 2,
    "num_decoder_layers": 2,
    "num_heads": 2,
    "relative_attention_num_buckets": 32,
    "relative_attention_max_distance": 128,
    "dropout_rate": 0.1,
    "layer_norm_epsilon": 1e-06,
    "initializer_factor": 1.0,
    "feed_forward_proj": "gated-gelu",
    "is_encoder_decoder": True,
    "use_cache": True,
    "tie_word_embeddings": False,
    "pad_token_id": 0,
    "eos_token_id": 1,
    "decoder_start_token_id": 0,
}

#: The variants built: name -> (dtype, seed, what differs from :data:`CONFIG`).
VARIANTS: dict[str, tuple[str, int, dict[str, Any]]] = {
    "tiny-fp32": ("float32", 24, {}),
    "tiny-bf16": ("bfloat16", 24, {}),
    # tie_word_embeddings true: MetricX's forward then rescales by d_model ** -0.5.
    "tiny-tied-fp32": ("float32", 25, {"tie_word_embeddings": True}),
}


def parameter_shapes(config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Every tensor of an ``MT5ForRegression`` state dict, by name, as transformers 4.30
    saves one (the shared embedding under three names)."""
    d, heads, kv, ff = config["d_model"], config["num_heads"], config["d_kv"], config["d_ff"]
    vocab, buckets = config["vocab_size"], config["relative_attention_num_buckets"]
    shapes: dict[str, tuple[int, ...]] = {
        name: (vocab, d) for name in ("shared.weight", "lm_head.weight")
    }
    shapes["encoder.embed_tokens.weight"] = shapes["decoder.embed_tokens.weight"] = (vocab, d)

    def attention(prefix: str) -> None:
        for part in "qkv":
            shapes[f"{prefix}.{part}.weight"] = (heads * kv, d)
        shapes[f"{prefix}.o.weight"] = (d, heads * kv)

    for stack, layers in (
        ("encoder", config["num_layers"]),
        ("decoder", config["num_decoder_layers"]),
    ):
        for i in range(layers):
            block = f"{stack}.block.{i}.layer"
            attention(f"{block}.0.SelfAttention")
            if i == 0:
                shapes[f"{block}.0.SelfAttention.relative_attention_bias.weight"] = (buckets, heads)
            shapes[f"{block}.0.layer_norm.weight"] = (d,)
            ff_index = 1
            if stack == "decoder":
                attention(f"{block}.1.EncDecAttention")
                shapes[f"{block}.1.layer_norm.weight"] = (d,)
                ff_index = 2
            shapes[f"{block}.{ff_index}.DenseReluDense.wi_0.weight"] = (ff, d)
            shapes[f"{block}.{ff_index}.DenseReluDense.wi_1.weight"] = (ff, d)
            shapes[f"{block}.{ff_index}.DenseReluDense.wo.weight"] = (d, ff)
            shapes[f"{block}.{ff_index}.layer_norm.weight"] = (d,)
        shapes[f"{stack}.final_layer_norm.weight"] = (d,)
    return shapes


def _draw(name: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """One tensor: its own stream, seeded by the variant's seed and the tensor's name."""
    rng = np.random.RandomState((seed * 1_000_003 + zlib.crc32(name.encode())) % 2**32)
    if name.endswith("layer_norm.weight"):
        return (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
    if len(shape) == 2 and shape[0] == VOCAB_SIZE:
        out = np.zeros(shape, dtype=np.float32)
        out[:USED_ROWS] = rng.standard_normal((USED_ROWS, shape[1]))
        if name == "lm_head.weight":
            out[SCORE_ID] = SCORE_ROW_SCALE * rng.standard_normal(shape[1]) + SCORE_ROW_SHIFT
        return out
    fan_in = shape[1] if len(shape) == 2 else 1
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def state_dict(config: dict[str, Any], seed: int) -> dict[str, np.ndarray]:
    """The variant's tensors (fp32); the embedding's three names hold one array."""
    shapes = parameter_shapes(config)
    shared = _draw("shared.weight", shapes["shared.weight"], seed)
    return {
        name: shared
        if name.endswith("embed_tokens.weight") or name == "shared.weight"
        else _draw(name, shape, seed)
        for name, shape in shapes.items()
    }


def write_checkpoint(folder: Path, variant: str) -> Path:
    """``folder`` holding ``config.json`` and ``model.safetensors`` of ``variant``, as
    ``save_pretrained`` lays out a MetricX-24 checkpoint (no tokenizer)."""
    import torch
    from safetensors.torch import save_file

    dtype, seed, changes = VARIANTS[variant]
    config = {**CONFIG, **changes, "torch_dtype": dtype}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    tensors = {
        name: torch.from_numpy(array).to(getattr(torch, dtype)).clone()  # own memory each
        for name, array in state_dict(config, seed).items()
    }
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder
