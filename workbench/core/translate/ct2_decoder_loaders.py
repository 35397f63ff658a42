"""The loaders that make CTranslate2 compute what transformers computes for a decoder-only
model, and the refusal of those it cannot convert exactly.

Decoder-only models (:data:`CAUSAL_LOADERS`: Llama, Mistral, Qwen 2 and 3, Gemma 1 and 3)
convert with the stock loaders into a model for ``ctranslate2.Generator``, with three
changes of ours:

- the vocabulary is the embedding rows as the tokenizer maps ids
  (:func:`~workbench.core.translate.ct2_export_info.vocabulary_by_id`), so ids pass
  through the export unchanged, Qwen's padded rows included;
- a token the stock loader reads as None (a bos, an unk) gets a name, since
  CTranslate2 cannot load a config with a null token;
- **Gemma**: transformers 5 keeps the RoPE in ``rope_parameters`` (Gemma 3 one per
  attention kind, the global layers' positions scaled linearly from 4B up), which the
  stock loaders do not read (they assume the default bases and no scaling), and Gemma 3
  scales queries by ``query_pre_attn_scalar``, not by the head size; ours sets both per
  layer, and refuses a config with logit soft-capping, which CTranslate2 lacks.

Gemma 2 is refused (every Gemma 2 soft-caps its logits), and so are decoder-only types
CTranslate2 has no loader for (Hunyuan-MT's ``hunyuan_v1_dense`` among them), in one
line, before any weight is read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.core.model.family import GEMMA, GENERIC, MODEL_TYPES
from workbench.core.translate.ct2_export_info import vocabulary_by_id
from workbench.errors import WorkbenchError

#: Decoder-only ``model_type`` -> the ctranslate2 loader (by class name) it converts with.
CAUSAL_LOADERS = {
    "llama": "LlamaLoader",
    "mistral": "MistralLoader",
    "qwen2": "Qwen2Loader",
    "qwen3": "Qwen3Loader",
    "gemma": "GemmaLoader",
    "gemma3_text": "Gemma3Loader",
}
#: Decoder-only types CTranslate2 has a loader for but that it cannot convert exactly.
CAUSAL_REFUSED = {
    "gemma2": "CTranslate2 has no attention logit soft-capping, which Gemma 2 uses",
}
#: The decoder-only models an export converts, for the refusal of others.
CAUSAL_EXPORTABLE = "Llama, Mistral, Qwen 2 and 3, Gemma and Gemma 3"


def decoder_loader(model_type: str) -> Any:
    """The ctranslate2 loader that reproduces transformers for a decoder-only
    ``model_type``, or None where CTranslate2 has none (or none that is exact)."""
    name = CAUSAL_LOADERS.get(model_type)
    if name is None:
        return None
    import numpy as np
    from ctranslate2.converters import transformers as stock
    from ctranslate2.specs.attention_spec import RotaryScalingType

    class ExactDecoderLoader(getattr(stock, name)):  # type: ignore[misc]
        """The stock loader, with every embedding row named as the tokenizer maps ids
        and no null token in the config."""

        def get_vocabulary(self, model: Any, tokenizer: Any) -> list[str]:
            config = getattr(model.config, "text_config", model.config)
            return vocabulary_by_id(tokenizer, int(config.vocab_size))

        def set_config(self, config: Any, model: Any, tokenizer: Any) -> None:
            super().set_config(config, model, tokenizer)
            # CTranslate2 reads these as strings ("type must be string, but is null");
            # a Generator only uses the bos to leave it out of a prompt it returns.
            if config.bos_token is None:
                config.bos_token = tokenizer.pad_token or tokenizer.eos_token
            if config.eos_token is None:
                config.eos_token = tokenizer.eos_token
            if config.unk_token is None:
                config.unk_token = ""  # as the stock Llama and Qwen loaders name none

    def set_rope(attention: Any, params: dict[str, Any]) -> None:
        """One attention layer's RoPE as transformers 5's ``rope_parameters`` give it."""
        if "rope_theta" in params:
            attention.rotary_base = np.float32(params["rope_theta"])
        rope_type = params.get("rope_type", "default")
        if rope_type == "linear":
            # Declared only on a spec built scaled: set past the spec's frozen fields.
            object.__setattr__(attention, "rotary_scaling_type", np.int8(RotaryScalingType.Linear))
            object.__setattr__(attention, "rotary_scaling_factor", np.float32(params["factor"]))
        elif rope_type != "default":
            raise NotImplementedError(f"RoPE type '{rope_type}' in a Gemma model")

    class ExactGemmaLoader(ExactDecoderLoader):
        """Gemma (and Gemma 3) with the RoPE of ``rope_parameters``, where transformers 5
        keeps it (the stock loader reads ``rope_theta``, which these configs lack)."""

        def get_model_spec(self, model: Any) -> Any:
            config = getattr(model.config, "text_config", model.config)
            for cap in ("attn_logit_softcapping", "final_logit_softcapping"):
                if getattr(config, cap, None):
                    raise NotImplementedError(f"CTranslate2 has no {cap}")
            spec = super().get_model_spec(model)
            rope = getattr(config, "rope_parameters", None) or {}
            kinds = getattr(self, "_layer_types", None) or [None] * len(spec.decoder.layer)
            scalar = getattr(config, "query_pre_attn_scalar", None)
            for layer, kind in zip(spec.decoder.layer, kinds, strict=True):
                attention = layer.self_attention
                set_rope(attention, rope.get(kind, rope) if kind else rope)
                if scalar:  # transformers scales queries by it, not by the head size
                    attention.queries_scale = np.float32(float(scalar) ** -0.5)
            return spec

    gemma = MODEL_TYPES.get(model_type, GENERIC).name == GEMMA.name  # RoPE as Gemma keeps it
    return ExactGemmaLoader() if gemma else ExactDecoderLoader()


def decoder_refusal(model_dir: Path, config: Any) -> WorkbenchError:
    """Why the decoder-only model in ``model_dir`` is not exported, in one line."""
    import ctranslate2
    from ctranslate2.converters import transformers as stock

    model_type = str(config.model_type)
    why = CAUSAL_REFUSED.get(model_type) or (
        "its CTranslate2 conversion is not one the workbench checks against transformers"
        if type(config).__name__ in getattr(stock, "_MODEL_LOADERS", {})
        else f"ctranslate2 {ctranslate2.__version__} has no converter for {model_type} models"
    )
    return WorkbenchError(
        f"cannot export the decoder-only {model_type} model '{model_dir}': {why} (of "
        f"decoder-only models the export converts {CAUSAL_EXPORTABLE}); translate it "
        "with --backend transformers"
    )
