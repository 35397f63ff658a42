"""The engine a :class:`~workbench.core.translate.translator.Translator` generates with:
token ids in, token ids out.

Everything a translation needs besides generating (cleaning, splitting long input, the
direction's prefix or prompt, decoding the ids) is the Translator's, written once; an
engine sees only token ids. :class:`TransformersBackend` runs ``model.generate``, the
reference and the engine training evaluates with; a CTranslate2 export is the other
(:class:`~workbench.core.translate.ct2.CT2Backend`).
"""

from __future__ import annotations

from typing import Any, Protocol

from workbench.core.decoding import DecodeOptions


class GenerationBackend(Protocol):
    """What the Translator needs from an engine: token ids in, token ids out."""

    name: str

    @property
    def generation_config(self) -> Any:
        """The model's decoding defaults (a transformers ``GenerationConfig``)."""

    def describe(self) -> str:
        """One line for the user: which engine, where."""

    def generate_ids(
        self, sources: list[list[int]], options: DecodeOptions, bound: int
    ) -> list[list[int]]:
        """Translate tokenized sources; at most ``bound`` new tokens each, and
        ``options.num_return_sequences`` rows per source, in a row."""


class TransformersBackend:
    """Generates with ``model.generate``: the reference engine, and the one for training."""

    name = "transformers"

    def __init__(self, model: Any, device: str | None = None) -> None:
        import torch

        self.model = model
        if device:
            self.model.to(device)
        self.device = next(model.parameters()).device
        self._torch = torch

    @property
    def generation_config(self) -> Any:
        """The model's decoding defaults (beams, n-gram block, blocked tokens)."""
        return self.model.generation_config

    def describe(self) -> str:
        """One line for the user: engine and device."""
        return f"transformers ({self.device.type})"

    def generate_ids(
        self, sources: list[list[int]], options: DecodeOptions, bound: int
    ) -> list[list[int]]:
        """Translate tokenized sources; at most ``bound`` new tokens each, and
        ``options.num_return_sequences`` rows per source, in a row."""
        torch = self._torch
        pad = int(self.model.config.pad_token_id)
        width = max(len(ids) for ids in sources)
        # A decoder-only model continues its prompt: padded on the left, so that every
        # row's next token follows its own last one; a seq2seq encoder is padded right.
        causal = not self.model.config.is_encoder_decoder
        input_ids = torch.tensor(padded(sources, pad, width, left=causal))
        mask = torch.tensor(padded([[1] * len(ids) for ids in sources], 0, width, left=causal))
        self.model.eval()
        seeded = options.do_sample and options.seed is not None
        cuda = [self.device] if self.device.type == "cuda" else []
        with torch.inference_mode(), torch.random.fork_rng(devices=cuda, enabled=seeded):
            if seeded:  # the same samples on every run, the process's own RNG untouched
                torch.manual_seed(int(options.seed or 0))
            generated = self.model.generate(
                input_ids=input_ids.to(self.device),
                attention_mask=mask.to(self.device),
                num_beams=options.num_beams,
                # max_new_tokens, not max_length: a max_new_tokens in the model's
                # generation config would otherwise win over this bound.
                max_new_tokens=bound,
                no_repeat_ngram_size=options.no_repeat_ngram_size,
                num_return_sequences=options.num_return_sequences,
                **options.sampling_kwargs(),
            )
        if causal:  # the prompt comes back in front of what was written
            generated = generated[:, width:]
        return generated.tolist()


def padded(rows: list[list[int]], fill: int, width: int, left: bool) -> list[list[int]]:
    """``rows`` filled with ``fill`` to ``width``, on the left or the right."""
    return [[fill] * (width - len(r)) + r if left else r + [fill] * (width - len(r)) for r in rows]
