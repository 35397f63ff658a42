"""Converting a saved model into CTranslate2's format, with the loader that makes
CTranslate2 compute what transformers computes for the model's family.

The loader is picked by the model's family
(:func:`workbench.core.model.family.detect_family`), never by name checks elsewhere: a
seq2seq family's is :mod:`workbench.core.translate.ct2_seq2seq_loaders`'s (three of them
ours, where the stock loader does not give transformers' output), a decoder-only model's
:mod:`workbench.core.translate.ct2_decoder_loaders`'s. A family or type without a loader
is refused in one line, a decoder-only one before any weight is read. Neither the target
language code nor the prompt is part of the conversion: the code is passed as the target
prefix by :class:`~workbench.core.translate.ct2.CT2Backend` (CTranslate2 ignores
``forced_bos_token_id``), and the prompt is text the Translator puts around the source,
the same for both engines.

The export also records the decoder's sliding window (Gemma 3, a Mistral with one):
CTranslate2 forwards a prompt longer than it in chunks that attend differently, so
:class:`~workbench.core.translate.ct2.CT2Backend` feeds such a prompt step by step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from workbench.core.model.family import FAMILIES, detect_family, is_causal, max_positions
from workbench.core.translate.ct2_decoder_loaders import (
    CAUSAL_EXPORTABLE,
    decoder_loader,
    decoder_refusal,
)
from workbench.core.translate.ct2_seq2seq_loaders import fill_missing_ids, seq2seq_loader
from workbench.errors import WorkbenchError

#: What an export converts (each has a loader), for the refusal of others.
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


def _refusal(model_dir: Path, model_type: str) -> WorkbenchError:
    return WorkbenchError(
        f"export converts {EXPORTABLE}, and '{model_dir}' is a {model_type} model; "
        "translate it with --backend transformers"
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
    if causal and decoder_loader(str(config.model_type)) is None:
        raise decoder_refusal(model_dir, config)  # before any weight is read
    model, tokenizer = load_model_and_tokenizer(str(model_dir))
    model_type = str(model.config.model_type)
    if causal:
        loader = decoder_loader(model_type)
    else:
        family = detect_family(model_type, tokenizer).name
        loader = seq2seq_loader(family, model_type)
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
