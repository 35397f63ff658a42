"""Converting a saved model into CTranslate2's format, with the loader that makes
CTranslate2 compute what transformers computes for the model's family.

ctranslate2 ships a loader per model class, but three of them do not give transformers'
output for the models users bring, so those three are ours:

- **Marian**: the stock loader assumes ``<pad>`` is the *last* vocabulary entry (true for
  opus-mt, where it is 65000) and drops that row; the demo model's ``<pad>`` is id 2, so
  the stock conversion fails ("vocabulary of size 3999"). It also starts the decoder from
  a zero vector, while transformers starts it from the ``<pad>`` embedding, which
  fine-tuning with tied embeddings moves away from zero (0.29 in norm on the demo model).
  Ours keeps the whole vocabulary and the real start token.
- **M2M100**: its tokenizer keeps the ``__xx__`` codes outside ``get_vocab()``, so the
  stock vocabulary is 100 rows short of the embeddings ("Source vocabulary 0 has size
  1009 but the model expected …"). Ours names every embedding row as the tokenizer maps
  ids, codes included.
- **mBART-50**: the stock loader reads ``normalize_before`` from the config, which
  transformers 5's ``MBartConfig`` no longer has, and starts the decoder as mBART-25 does
  (with the language code) unless the config names the mBART-50 tokenizer class. Ours
  says what the architecture is (pre-norm, a layer norm after the embeddings) and starts
  the decoder from the config's ``decoder_start_token_id``, as ``generate`` does.

NLLB-200 and T5/mT5 convert exactly with the stock loaders. A special id a loader reads
that the config has as None is taken from where transformers takes it
(:func:`fill_missing_ids`), or the export is refused in one line. The loader is picked by
the model's family (:func:`workbench.core.model.family.detect_family`), never by name
checks elsewhere; a family without a loader is refused in one line. The target language
code is not part of the conversion: CTranslate2 ignores ``forced_bos_token_id``, so
:class:`~workbench.core.translate.ct2.CT2Backend` passes it as the target prefix.

Decoder-only models (:data:`CAUSAL_LOADERS`: Llama, Mistral, Qwen 2 and 3, Gemma 1 and 3)
convert with the stock loaders into a model for ``ctranslate2.Generator``, with three
changes of ours:

- the vocabulary is the embedding rows as the tokenizer maps ids
  (:func:`~.ct2_export_info.vocabulary_by_id`), so ids pass through the export
  unchanged, Qwen's padded rows included;
- a token the stock loader reads as None (a bos, an unk) gets a name, since
  CTranslate2 cannot load a config with a null token;
- **Gemma**: transformers 5 keeps the RoPE in ``rope_parameters`` (Gemma 3 one per
  attention kind, the global layers' positions scaled linearly from 4B up), which the
  stock loaders do not read (they assume the default bases and no scaling), and Gemma 3
  scales queries by ``query_pre_attn_scalar``, not by the head size; ours sets both per
  layer, and refuses a config with logit soft-capping, which CTranslate2 lacks.

The export also records the decoder's sliding window (Gemma 3, a Mistral with one):
CTranslate2 forwards a prompt longer than it in chunks that attend differently, so
:class:`~workbench.core.translate.ct2.CT2Backend` feeds such a prompt step by step.

Gemma 2 is refused (every Gemma 2 soft-caps its logits), and so are decoder-only types
CTranslate2 has no loader for (Hunyuan-MT's ``hunyuan_v1_dense`` among them), in one
line, before any weight is read. The prompt is not part of the conversion either: it is
text the Translator puts around the source, the same for both engines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from workbench.core.model.family import (
    FAMILIES,
    GEMMA,
    GENERIC,
    M2M100,
    MARIAN,
    MBART50,
    MODEL_TYPES,
    NLLB,
    T5,
    detect_family,
    is_causal,
    max_positions,
)
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
#: What an export converts (each has a loader below), for the refusal of others.
EXPORTABLE = (
    ", ".join(f.title for f in FAMILIES[:-1])
    + f" and {FAMILIES[-1].title} models, and the decoder-only {CAUSAL_EXPORTABLE}"
)


class ConvertedModel(NamedTuple):
    """What an export records of the model it was made from (its config.json is
    ctranslate2's own): enough to translate with it without the model's weights."""

    model_type: str
    max_positions: int | None  # None: relative positions (T5)
    causal: bool  # a decoder-only model: generated with ctranslate2.Generator
    #: The decoder's sliding window (Gemma 3, a Mistral with one), 0 for none: CTranslate2
    #: forwards a longer prompt in chunks that do not attend as transformers does.
    sliding_window: int = 0


def fill_missing_ids(model: Any, tokenizer: Any, family: str, model_dir: Path) -> None:
    """Give ``model.config`` the special ids the loaders read where it has None, taken from
    where transformers takes them, or refuse the export in one line.

    The loaders turn those ids into tokens with ``convert_ids_to_tokens``, which raises a
    TypeError on None; and CTranslate2 cannot load a config whose bos token is null ("type
    must be string, but is null"). The model object is used for nothing else afterwards.

    - ``decoder_start_token_id``: every loader reads it (T5's only when the config has the
      key at all; without it, ``<pad>``). ``generate`` takes the generation config's, else
      the generation config's ``bos_token_id``; MBartConfig's default is None, so a
      config.json with null beside a generation_config.json with the id is a model
      transformers translates.
    - ``bos_token_id``: only mBART-50's loader reads it (the others take the tokenizer's
      ``bos_token``, or T5's ``<pad>``). transformers 5's MBart50Tokenizer has no bos
      token, so a config built from it has null; fairseq's ``<s>`` (id 0) is that token.
    - ``eos_token_id``: only mBART-50's loader reads it; the tokenizer's is the one the
      stock loaders use.
    """
    config = model.config
    if getattr(config, "decoder_start_token_id", 0) is None:
        generation = model.generation_config
        start = generation.decoder_start_token_id
        config.decoder_start_token_id = start if start is not None else generation.bos_token_id
        if config.decoder_start_token_id is None:
            raise WorkbenchError(
                f"'{model_dir}' names no decoder start token (decoder_start_token_id and "
                "bos_token_id are null in config.json and generation_config.json); set "
                "decoder_start_token_id in its config.json"
            )
    if family != MBART50.name:
        return
    if config.eos_token_id is None:
        config.eos_token_id = tokenizer.eos_token_id
    if config.bos_token_id is None:
        bos = tokenizer.bos_token or ("<s>" if "<s>" in tokenizer.get_vocab() else None)
        if bos is None:
            raise WorkbenchError(
                f"'{model_dir}' has bos_token_id null in config.json and its tokenizer has "
                "no bos token and no <s>; set bos_token_id in its config.json"
            )
        config.bos_token_id = tokenizer.convert_tokens_to_ids(bos)


def _loader(family: str, model_type: str) -> Any:
    """The ctranslate2 loader that reproduces transformers for ``family``, or None."""
    from ctranslate2.converters import transformers as stock

    class ExactMarianLoader(stock.BartLoader):
        """Marian as transformers runs it: full vocabulary, real decoder start token."""

        @property
        def architecture_name(self) -> str:
            return "MarianMTModel"

        def get_model_spec(self, model: Any) -> Any:
            model.config.normalize_before = False  # Marian is post-norm
            model.config.normalize_embedding = False
            return super().get_model_spec(model)

        def set_config(self, config: Any, model: Any, tokenizer: Any) -> None:
            config.eos_token = tokenizer.eos_token
            config.unk_token = tokenizer.unk_token
            config.decoder_start_token = tokenizer.convert_ids_to_tokens(
                model.config.decoder_start_token_id
            )

    class ExactM2M100Loader(stock.M2M100Loader):
        """M2M100 with its language codes in the vocabulary, each at its own id."""

        def get_vocabulary(self, model: Any, tokenizer: Any) -> list[str]:
            return vocabulary_by_id(tokenizer, model.config.vocab_size)

    class ExactMBart50Loader(stock.MBartLoader):
        """mBART-50: pre-norm with an embedding layer norm, decoding from ``</s>``."""

        def get_model_spec(self, model: Any) -> Any:
            # What MBartEncoder/MBartDecoder always do, whatever the config says.
            model.config.normalize_before = True
            model.config.normalize_embedding = True
            return super().get_model_spec(model)

        def set_config(self, config: Any, model: Any, tokenizer: Any) -> None:
            ids = model.config
            config.bos_token = tokenizer.convert_ids_to_tokens(ids.bos_token_id)
            config.eos_token = tokenizer.convert_ids_to_tokens(ids.eos_token_id)
            config.unk_token = tokenizer.unk_token
            config.decoder_start_token = tokenizer.convert_ids_to_tokens(ids.decoder_start_token_id)

    # mT5 is T5's stack; UMT5 gives every layer its own position bias (T5 shares layer 0's).
    t5_variants = {"mt5": stock.MT5Loader, "umt5": stock.UMT5Loader}
    by_family: dict[str, Any] = {
        MARIAN.name: ExactMarianLoader,
        NLLB.name: stock.M2M100Loader,
        M2M100.name: ExactM2M100Loader,
        MBART50.name: ExactMBart50Loader,
        T5.name: t5_variants.get(model_type, stock.T5Loader),
    }
    found = by_family.get(family)
    return found() if found is not None else None


def _causal_loader(model_type: str) -> Any:
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


def _refusal(model_dir: Path, model_type: str) -> WorkbenchError:
    return WorkbenchError(
        f"export converts {EXPORTABLE}, and '{model_dir}' is a {model_type} model; "
        "translate it with --backend transformers"
    )


def _causal_refusal(model_dir: Path, config: Any) -> WorkbenchError:
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


def convert_model(model_dir: Path, output_dir: Path, quantization: str) -> ConvertedModel:
    """Write the CTranslate2 model of ``model_dir`` into ``output_dir``; what it is (the
    ``model_type``, position bound and kind an export must record: its config.json is
    ctranslate2's own).

    A decoder-only model's export also gets the generation config transformers decodes
    it with (its stop tokens, and its defaults), written even where the folder has no
    generation_config.json of its own (transformers then takes it from config.json).
    """
    import torch
    from ctranslate2.converters.transformers import TransformersConverter
    from transformers import AutoConfig

    from workbench.core.model.load import load_model_and_tokenizer

    config = AutoConfig.from_pretrained(str(model_dir))
    causal = is_causal(config)
    if causal and _causal_loader(str(config.model_type)) is None:
        raise _causal_refusal(model_dir, config)  # before any weight is read
    model, tokenizer = load_model_and_tokenizer(str(model_dir))
    model_type = str(model.config.model_type)
    if causal:
        loader = _causal_loader(model_type)
    else:
        family = detect_family(model_type, tokenizer).name
        loader = _loader(family, model_type)
        if loader is not None:
            fill_missing_ids(model, tokenizer, family, model_dir)
    if loader is None:
        raise _refusal(model_dir, model_type)
    generation = model.generation_config
    windows: list[int] = []

    class LoadedModelConverter(TransformersConverter):
        """ctranslate2's converter over the model we loaded (and checked) ourselves."""

        def _load(self) -> Any:
            with torch.no_grad():
                spec = loader(model, tokenizer)
            decoder = getattr(spec, "decoder", None)  # a seq2seq spec has no window
            windows.append(int(getattr(decoder, "sliding_window", 0) or 0) if causal else 0)
            return spec

    # The converter reuses (and may change) the model's tensors: this model object is
    # used for nothing else afterwards.
    try:
        LoadedModelConverter(str(model_dir)).convert(
            str(output_dir), quantization=quantization, force=True
        )
    except (ValueError, KeyError, NotImplementedError) as err:
        raise WorkbenchError(
            f"ctranslate2 cannot convert the {model_type} model '{model_dir}' ({err}); "
            "translate it with --backend transformers"
        ) from None
    if causal:
        generation.save_pretrained(str(output_dir))
    return ConvertedModel(model_type, max_positions(config), causal, windows[0])
