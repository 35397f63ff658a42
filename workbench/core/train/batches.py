"""A run's batches: how training rows are collated for each kind of model, and how a
decoder-only model's evaluation batch is translated.

A seq2seq batch is a source and its labels (``DataCollatorForSeq2Seq``); a decoder-only
batch is one row of prompt and target, labelled -100 over the prompt
(:meth:`workbench.core.data.tokenize.PairTokenizer.encode`).
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import DataCollatorForSeq2Seq

from workbench.core.train import loss as token_loss


def prompted_generation(model: Any, inputs: dict[str, Any], args: Any) -> Any:
    """The new tokens a decoder-only model writes after each row's prompt (the positions
    whose label is -100), padded right with the pad id into one tensor."""
    from workbench.core.decoding import DecodeOptions, length_bound
    from workbench.core.translate.backend import TransformersBackend

    rows = inputs["input_ids"]
    prompt = inputs["attention_mask"].bool() & inputs["labels"].eq(-100)
    prompts = [row[keep].tolist() for row, keep in zip(rows, prompt, strict=True)]
    backend = TransformersBackend(token_loss.base_model(model))
    options = DecodeOptions(num_beams=args.generation_num_beams or 1)
    # Bounded as the Translator bounds "before" and "after": by the longest row, the
    # prompt counted in (a safe bound: it is a little longer than the source).
    bound = length_bound(max(len(ids) for ids in prompts), args.generation_max_length - 1)
    written = backend.generate_ids(prompts, options, bound)
    pad = int(backend.model.config.pad_token_id)
    width = max(1, *(len(ids) for ids in written))
    return torch.tensor([ids + [pad] * (width - len(ids)) for ids in written], device=rows.device)


class PromptCollator:
    """A decoder-only model's batches: prompt and target in one row, padded on the right
    (the padding masked and labelled -100), so positions count from each row's start
    as they do when the model writes after its prompt."""

    def __init__(self, pad_token_id: int) -> None:
        self.pad = pad_token_id

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        """The padded batch as tensors."""
        width = max(len(f["input_ids"]) for f in features)

        def padded(name: str, fill: int) -> Any:
            return torch.tensor([list(f[name]) + [fill] * (width - len(f[name])) for f in features])

        return {
            "input_ids": padded("input_ids", self.pad),
            "attention_mask": padded("attention_mask", 0),
            "labels": padded("labels", -100),
        }


class DecoderInputsCollator(DataCollatorForSeq2Seq):
    """``DataCollatorForSeq2Seq`` that also builds ``decoder_input_ids`` where the model
    cannot (M2M100 and NLLB-200 lack ``prepare_decoder_input_ids_from_labels``).

    With label smoothing the Trainer takes the labels out of the batch before the
    forward pass, and such a model is then left with no decoder input at all.
    """

    def __call__(self, features: Any, return_tensors: Any = None) -> Any:
        """The collated batch, with ``decoder_input_ids`` shifted from the labels if it has none."""
        batch = super().__call__(features, return_tensors)
        if "decoder_input_ids" not in batch and "labels" in batch and self.model is not None:
            from transformers.models.bart.modeling_bart import shift_tokens_right

            config = self.model.config
            batch["decoder_input_ids"] = shift_tokens_right(
                batch["labels"], config.pad_token_id, config.decoder_start_token_id
            )
        return batch


def pair_collator(tokenizer: Any, model: Any, causal: bool) -> Any:
    """The collator of a run's supervised batches: a prompt's for a decoder-only model,
    else labels with their decoder inputs."""
    if causal:
        return PromptCollator(int(tokenizer.pad_token_id))
    return DecoderInputsCollator(tokenizer, model=model, label_pad_token_id=-100)
