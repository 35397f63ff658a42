"""What a model's config says of its network: the transformers class it loads with (a
seq2seq or a causal LM, or one line for an encoder that cannot translate), and what its
training step and cache scale with, whatever the family calls the widths and depths
(T5's ``d_ff``, the BART-like ``encoder_ffn_dim``, a decoder-only ``intermediate_size``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.core.model.family import family_of, is_causal
from workbench.errors import WorkbenchError


def model_class(model_config: Any) -> Any:
    """The transformers auto class a config loads with (causal or seq2seq), or one line
    for a model that cannot translate (an encoder such as BERT)."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES as seq2seq_names,
    )

    model_type = str(getattr(model_config, "model_type", ""))
    if is_causal(model_config):
        return AutoModelForCausalLM
    if model_type in seq2seq_names or getattr(model_config, "is_encoder_decoder", False):
        return AutoModelForSeq2SeqLM
    raise WorkbenchError(
        f"model type '{model_type}' is neither a seq2seq nor a decoder-only model (an "
        "encoder such as BERT cannot write a translation); pass a translation model "
        "(opus-mt, NLLB, M2M100, mBART-50, T5) or a causal LM (Qwen, Llama, Gemma, Mistral)"
    )


def cache_shape(model_config: Any) -> tuple[int, int, int]:
    """Decoder layers, attention heads and floats per head, in the config's own names.

    T5 calls them ``num_decoder_layers``, ``num_heads`` and ``d_kv`` (and ``d_kv·heads``
    need not be ``d_model``); the BART-like families ``decoder_layers``,
    ``decoder_attention_heads`` and ``d_model / heads``.
    """
    c = model_config
    if is_causal(c):  # grouped-query attention caches the key-value heads only
        heads = int(getattr(c, "num_key_value_heads", None) or c.num_attention_heads)
        return int(c.num_hidden_layers), heads, _head_dim(c)
    if hasattr(c, "d_kv"):
        layers = getattr(c, "num_decoder_layers", None) or c.num_layers
        return int(layers), int(c.num_heads), int(c.d_kv)
    heads = int(c.decoder_attention_heads)
    return int(c.decoder_layers), heads, int(c.d_model) // heads


def _head_dim(c: Any) -> int:
    """Floats per attention head: ``head_dim`` where the config sets it (Qwen3, Gemma),
    else the width over the heads."""
    return int(getattr(c, "head_dim", None) or int(c.hidden_size) // int(c.num_attention_heads))


def checkpoint_dtype(model_config: Any) -> str:
    """The dtype config.json names (``bfloat16`` for Qwen3 and Hunyuan-MT), float32 where
    it names none."""
    return str(getattr(model_config, "dtype", None) or "float32").removeprefix("torch.")


def run_dtype(model_config: Any, lora: bool) -> str:
    """The dtype a run loads its model in: float32 for weights that train (a bf16
    checkpoint fully fine-tuned in bf16 would round most of AdamW's small updates away,
    and before/after are decoded in fp32); a LoRA run's frozen base as its checkpoint
    stores it, which is what lets a 7B model's adapters train on a 24 GB GPU."""
    dtype = checkpoint_dtype(model_config)
    return dtype if lora and dtype in ("bfloat16", "float16") else "float32"


def weight_bytes(model_config: Any, lora: bool) -> int:
    """Bytes a weight takes as a run loads it (:func:`run_dtype`)."""
    return 4 if run_dtype(model_config, lora) == "float32" else 2


@dataclass(frozen=True)
class Shape:
    """What the activations of a training step scale with, in one set of names."""

    d_model: int
    ffn_dim: int
    encoder_layers: int
    decoder_layers: int
    heads: int
    vocab_size: int
    #: A decoder-only model: one stack over prompt, source and target (``decoder_layers``).
    causal: bool = False
    #: The query and the key/value projections' widths (``heads × head_dim`` and
    #: ``key-value heads × head_dim``, not ``d_model`` where a config sets ``head_dim``).
    query_width: int = 0
    kv_width: int = 0
    #: Whether queries and keys are normalised per head (Qwen3, Gemma 3, Hunyuan).
    qk_norm: bool = False
    #: Norms over the model width per layer (Gemma 2 and 3 have four).
    norms: int = 2


def model_shape(model_config: Any) -> Shape:
    """The widths and depths of a config, whichever family's names it uses (T5's
    ``d_ff``/``num_layers``, the BART-like families' ``encoder_ffn_dim``/``encoder_layers``)."""
    c = model_config
    if is_causal(c):  # one stack: counted as the decoder's, with no encoder
        family = family_of(c)  # its layer's norms (Hunyuan names its q/k norm in config)
        layers, kv_heads, head_dim = cache_shape(c)
        return Shape(
            d_model=int(c.hidden_size),
            # GPT-2 and its kin name no FFN width where it is 4 × the model's
            ffn_dim=int(
                getattr(c, "intermediate_size", None)
                or getattr(c, "n_inner", None)
                or 4 * int(c.hidden_size)
            ),
            encoder_layers=0,
            decoder_layers=layers,
            heads=int(c.num_attention_heads),
            vocab_size=int(c.vocab_size),
            causal=True,
            query_width=int(c.num_attention_heads) * head_dim,
            kv_width=kv_heads * head_dim,
            qk_norm=family.qk_norm or bool(getattr(c, "use_qk_norm", False)),
            norms=family.layer_norms,
        )
    if hasattr(c, "d_kv"):
        return Shape(
            d_model=int(c.d_model),
            ffn_dim=int(c.d_ff),
            encoder_layers=int(c.num_layers),
            decoder_layers=int(getattr(c, "num_decoder_layers", None) or c.num_layers),
            heads=int(c.num_heads),
            vocab_size=int(c.vocab_size),
        )
    return Shape(
        d_model=int(c.d_model),
        ffn_dim=max(int(c.encoder_ffn_dim), int(c.decoder_ffn_dim)),
        encoder_layers=int(c.encoder_layers),
        decoder_layers=int(c.decoder_layers),
        heads=max(int(c.encoder_attention_heads), int(c.decoder_attention_heads)),
        vocab_size=int(getattr(c, "decoder_vocab_size", None) or c.vocab_size),
    )
