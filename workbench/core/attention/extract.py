"""Cross-attention taken from a model: translate one sentence, then one forward pass over
the output with the weights returned, as an :class:`~workbench.core.attention.grid.AttentionMap`.
A decoder-only model has no cross-attention; its map is the translation's self-attention
over the source inside the prompt (:mod:`workbench.core.attention.causal`).

Marian loads with SDPA attention, which is fast but returns no weights: each pass here
runs in eager attention for its own duration
(:func:`~workbench.core.attention.eager.eager_attention`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from workbench.core.attention.eager import check_weights, eager_attention
from workbench.core.attention.grid import AttentionMap, check_source_tokens, special_flags
from workbench.core.config.direction_request import DirectionRequest
from workbench.core.decoding import DecodeOptions, clean_input, length_bound
from workbench.core.languages import Direction
from workbench.errors import WorkbenchError


def source_ids(tokenizer: Any, sentence: str, direction: Direction | None = None) -> list[int]:
    """Token ids of a sentence as the translator feeds it (the direction's prefix or
    code first, then </s>)."""
    cleaned = clean_input(sentence)
    if not cleaned:
        raise WorkbenchError(
            "empty sentence: give the text to look at, e.g. "
            'workbench attention "I like to drink tea."'
        )
    ids = list(tokenizer((direction or Direction()).source_text(cleaned))["input_ids"])
    check_source_tokens(len(ids), cleaned)
    return ids


class ForwardAttentions(NamedTuple):
    """The three attentions of one teacher-forced pass, each ``[layers, heads, rows, cols]``."""

    encoder: np.ndarray  # source x source
    decoder: np.ndarray  # decoder input x decoder input, zero above the diagonal (causal)
    cross: np.ndarray  # decoder input x source


def forward_attentions(model: Any, input_ids: list[int], sequence: list[int]) -> ForwardAttentions:
    """Encoder self-, decoder self- and cross-attention in one teacher-forced forward pass.

    ``sequence`` starts with the decoder start token, as ``generate`` returns it; decoder
    row ``t`` is the position that predicts ``sequence[t + 1]``, so the decoder's rows
    and columns are ``len(sequence) - 1`` long.
    """
    import torch

    device = next(model.parameters()).device
    src = torch.tensor([input_ids], device=device)
    dec = torch.tensor([sequence[:-1]], device=device)
    with torch.inference_mode(), eager_attention(model):
        out = model(
            input_ids=src,
            attention_mask=torch.ones_like(src),
            decoder_input_ids=dec,
            output_attentions=True,
            use_cache=False,
        )
    for attentions in (out.encoder_attentions, out.decoder_attentions, out.cross_attentions):
        check_weights(attentions)

    def stacked(attentions: Any) -> np.ndarray:
        return torch.stack([a[0] for a in attentions]).float().cpu().numpy()

    return ForwardAttentions(
        stacked(out.encoder_attentions),
        stacked(out.decoder_attentions),
        stacked(out.cross_attentions),
    )


def forward_attention(model: Any, input_ids: list[int], sequence: list[int]) -> np.ndarray:
    """Cross-attention for a full output sequence in one teacher-forced forward pass.

    Row ``t`` of the result is the attention while predicting ``sequence[t + 1]``.
    Returns ``[layers, heads, len(sequence) - 1, len(input_ids)]``.
    """
    return forward_attentions(model, input_ids, sequence).cross


def _generate_kwargs(input_ids: list[int], options: DecodeOptions) -> dict[str, Any]:
    """generate()'s decoding arguments, exactly as the Translator passes them."""
    return {
        "num_beams": options.num_beams,
        "max_new_tokens": length_bound(len(input_ids), options.max_new_tokens),
        "no_repeat_ngram_size": options.no_repeat_ngram_size,
    }


def translate_ids(model: Any, input_ids: list[int], options: DecodeOptions) -> list[int]:
    """The output ids (start token first) on the model's fast attention path."""
    import torch

    src = torch.tensor([input_ids], device=next(model.parameters()).device)
    with torch.inference_mode():
        out = model.generate(
            input_ids=src,
            attention_mask=torch.ones_like(src),
            **_generate_kwargs(input_ids, options),
        )
    return [int(t) for t in out[0]]


def generate_with_attention(
    model: Any, input_ids: list[int], options: DecodeOptions
) -> tuple[list[int], np.ndarray]:
    """Translate and collect the cross-attention ``generate`` saw at each step.

    With beams, ``cross_attentions[step]`` holds every running beam; ``beam_indices``
    names the beam each chosen token came from, and following it gives the chosen
    sequence's own attention. Returns the sequence (with the start token) and
    ``[layers, heads, steps, source]``.
    """
    import torch

    device = next(model.parameters()).device
    src = torch.tensor([input_ids], device=device)
    with torch.inference_mode(), eager_attention(model):
        out = model.generate(
            input_ids=src,
            attention_mask=torch.ones_like(src),
            **_generate_kwargs(input_ids, options),
            output_attentions=True,
            return_dict_in_generate=True,
            output_scores=options.num_beams > 1,
        )
    check_weights(out.cross_attentions)
    sequence = [int(t) for t in out.sequences[0]]
    steps = len(sequence) - 1
    beams = [int(b) for b in out.beam_indices[0][:steps]] if options.num_beams > 1 else [0] * steps
    per_step = [
        torch.stack([layer[beams[t], :, -1, :] for layer in out.cross_attentions[t]])
        for t in range(steps)
    ]  # each [layers, heads, source]
    weights = torch.stack(per_step, dim=2).float().cpu().numpy()
    return sequence, weights


def _strip_padding(sequence: list[int], pad_id: int | None, eos_id: int | None) -> list[int]:
    """Drop anything after the first </s> (beam outputs can be padded)."""
    if eos_id is not None and eos_id in sequence[1:]:
        sequence = sequence[: sequence.index(eos_id, 1) + 1]
    while len(sequence) > 2 and pad_id is not None and sequence[-1] == pad_id:
        sequence = sequence[:-1]
    return sequence


def attention_for(
    model: Any,
    tokenizer: Any,
    sentence: str,
    direction: Direction | None = None,
    options: DecodeOptions | None = None,
    method: Literal["forward", "generate"] = "forward",
) -> AttentionMap:
    """Translate ``sentence`` and return the cross-attention of the chosen output.

    ``options`` default to the model's own (:meth:`DecodeOptions.of_model`), as the
    Translator's do, so the heatmap is drawn for the translation the console prints.
    ``method="forward"`` (default) re-runs one forward pass over the final sequence,
    which is the same for greedy and beam search and costs one pass; ``"generate"``
    keeps the weights generate saw step by step (following the chosen beam). Both give
    the same numbers; the tests hold them to it. A decoder-only model's map (always one
    forward pass) is its self-attention over the source inside the prompt.
    """
    options = options or DecodeOptions.of_model(model.generation_config)
    if direction is not None and direction.causal:
        from workbench.core.attention.causal import causal_attention_for

        return causal_attention_for(model, tokenizer, sentence, direction, options)
    if method == "forward":
        ids, trimmed = translate_for_attention(model, tokenizer, sentence, direction, options)
        weights = forward_attention(model, ids, trimmed)
    else:
        ids = source_ids(tokenizer, sentence, direction)
        model.eval()
        sequence, weights = generate_with_attention(model, ids, options)
        trimmed = _strip_padding(sequence, tokenizer.pad_token_id, tokenizer.eos_token_id)
        weights = weights[:, :, : len(trimmed) - 1]
    return cross_attention_map(
        tokenizer, sentence, ids, trimmed, weights, options.num_beams, direction
    )


def translate_for_attention(
    model: Any,
    tokenizer: Any,
    sentence: str,
    direction: Direction | None,
    options: DecodeOptions,
) -> tuple[list[int], list[int]]:
    """The source ids and the output (start token first, padding dropped) a map is drawn for.

    Shared by the heatmap and the Lab's three attentions, so both look at the same
    translation of the same ids.
    """
    ids = source_ids(tokenizer, sentence, direction)
    model.eval()
    sequence = translate_ids(model, ids, options)
    return ids, _strip_padding(sequence, tokenizer.pad_token_id, tokenizer.eos_token_id)


def cross_attention_map(
    tokenizer: Any,
    sentence: str,
    ids: list[int],
    sequence: list[int],
    weights: np.ndarray,
    num_beams: int = 1,
    direction: Direction | None = None,
) -> AttentionMap:
    """The :class:`AttentionMap` of ``weights`` for source ``ids`` and output ``sequence``."""
    shown = direction or Direction()
    src_tokens = list(tokenizer.convert_ids_to_tokens(ids))
    tgt_ids = sequence[1:]
    tgt_tokens = list(tokenizer.convert_ids_to_tokens(tgt_ids))
    return AttentionMap(
        sentence=clean_input(sentence),
        translation=tokenizer.decode(shown.shown(tgt_ids), skip_special_tokens=True).strip(),
        source_tokens=src_tokens,
        target_tokens=tgt_tokens,
        source_special=special_flags(tokenizer, ids, src_tokens, shown),
        target_special=special_flags(tokenizer, tgt_ids, tgt_tokens, shown),
        weights=weights.astype(np.float32),
        num_beams=num_beams,
    )


@dataclass
class AttentionModel:
    """A model loaded for attention views, with the direction it translates in."""

    name: str
    model: Any
    tokenizer: Any
    direction: Direction

    def map(
        self, sentence: str, num_beams: int | None = None, max_new_tokens: int | None = None
    ) -> AttentionMap:
        """The attention of ``sentence``, decoded with the model's own settings unless
        the user overrides beams or length."""
        return attention_for(
            self.model,
            self.tokenizer,
            sentence,
            self.direction,
            self.options(num_beams, max_new_tokens),
        )

    def options(
        self, num_beams: int | None = None, max_new_tokens: int | None = None
    ) -> DecodeOptions:
        """The model's own decoding settings, with the user's beams or length if given."""
        return DecodeOptions.of_model(self.model.generation_config).overridden(
            num_beams, max_new_tokens
        )


def load_attention_model(model_dir: str, request: DirectionRequest | None = None) -> AttentionModel:
    """Load a saved model or Hub id in its direction (languages, label, prefix or prompt).

    ``workbench attention``, the TUI's Attention pane, the Lab and the run report all
    start here, so they load, label and decode a model the same way; what ``request``
    leaves out (the languages, a decoder-only model's prompt) is what the model recorded
    (:meth:`~workbench.core.config.direction_request.DirectionRequest.over`).
    """
    from workbench.core.model.direction import apply_direction, resolve_direction
    from workbench.core.model.family import max_positions
    from workbench.core.model.load import load_model_and_tokenizer
    from workbench.core.translate.loading import settings_for

    model, tokenizer = load_model_and_tokenizer(model_dir)
    asked = (request or DirectionRequest()).over(settings_for(model_dir))
    direction = resolve_direction(
        model.config.model_type,
        max_positions(model.config),
        tokenizer,
        asked,
        model_name=model_dir,
    )
    apply_direction(tokenizer, direction, model)
    return AttentionModel(model_dir, model, tokenizer, direction)
