"""Segments into the token sequences COMET encodes, as unbabel-comet 2.2.7 makes them.

Each text is tokenized alone with the library's truncation: at ``max_positions - 2``
tokens, where ``max_positions`` is the encoder's position table less two (510 for XLM-R
large), ``<s>`` and ``</s>`` included. The library's ``XLMRobertaTokenizerFast``
(transformers 4) reads the encoder's ``tokenizer.json`` as it is written; transformers 5's
``XLMRobertaTokenizer`` rebuilds the normaliser and pre-tokeniser from its class and
ignores the file's (a file that keeps a trailing space as a token of its own gives other
ids). So where the encoder has a ``tokenizer.json``, :class:`SegmentTokenizer` runs it
with the ``tokenizers`` library directly, truncated as the fast tokenizer truncates; only
an encoder without one (a SentencePiece model alone) is tokenized by transformers, which
then builds what transformers 4 converted from the same model.

A unified model (CometKiwi) reads one joint sequence per segment: ``<s> mt </s></s> src
</s>`` (then ``</s> ref </s>`` when it reads a reference), cut at ``max_positions`` only
when the parts' tokens exceed what is left once the special tokens are counted -- which
can drop the closing ``</s>``, as the library does.

The library batches segments in source-length order and pads each batch; a sequence's
score does not depend on what it is batched with (its padding is masked), so here every
distinct sequence of all segments, sources and references included, is encoded once, in
batches of similar length: less padding, and the source and reference of a "before" and an
"after" are encoded only once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Tokens between two parts of a joint sequence: XLM-R's ``</s></s>``.
SEPARATOR_TOKENS = 2


@dataclass(frozen=True)
class SequenceBounds:
    """What the encoder takes: its position bound and special tokens."""

    max_positions: int  # max_position_embeddings − 2, as the library counts it
    cls_id: int
    sep_id: int
    pad_id: int

    @classmethod
    def of(cls, tokenizer: Any, config: Any) -> SequenceBounds:
        """The bounds of an XLM-R encoder from its tokenizer and config."""
        return cls(
            max_positions=int(config.max_position_embeddings) - 2,
            cls_id=int(tokenizer.cls_token_id),
            sep_id=int(tokenizer.sep_token_id),
            pad_id=int(tokenizer.pad_token_id),
        )


class SegmentTokenizer:
    """Texts to ids, ``<s>`` and ``</s>`` included, truncated as the library truncates:
    with the encoder's ``tokenizer.json`` where it has one, else its transformers tokenizer."""

    def __init__(self, tokenizer: Any, bounds: SequenceBounds, file: Path | None) -> None:
        self.tokenizer = tokenizer  # transformers': the special ids, and the fallback
        self.bounds = bounds
        self.file = file
        self.raw: Any = None
        if file is not None:
            from tokenizers import Tokenizer

            self.raw = Tokenizer.from_file(str(file))
            # What XLMRobertaTokenizerFast(truncation=True, max_length=...) sets.
            self.raw.enable_truncation(max_length=bounds.max_positions - 2)
            self.raw.no_padding()

    def __call__(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's ids."""
        if not texts:
            return []
        if self.raw is not None:
            return [list(e.ids) for e in self.raw.encode_batch(list(texts))]
        encoded = self.tokenizer(
            list(texts), truncation=True, max_length=self.bounds.max_positions - 2
        )
        return [list(ids) for ids in encoded["input_ids"]]


def joint_sequence(parts: Sequence[Sequence[int]], bounds: SequenceBounds) -> tuple[int, ...]:
    """A unified model's input: ``parts`` (mt first, each with its own ``<s>``…``</s>``)
    joined by ``</s></s>``, and cut as unbabel-comet's ``concat_sequences`` cuts it."""
    stripped = [[t for t in part if t != bounds.pad_id] for part in parts]
    joined = stripped[0]
    for part in stripped[1:]:
        joined = [
            bounds.cls_id,
            *joined[1:-1],
            *[bounds.sep_id] * SEPARATOR_TOKENS,
            *part[1:-1],
            bounds.sep_id,
        ]
    special = 1 + len(parts) * SEPARATOR_TOKENS
    if sum(len(part[1:-1]) for part in stripped) > bounds.max_positions - special:
        joined = joined[: bounds.max_positions]
    return tuple(joined)


def length_batches(sequences: Sequence[tuple[int, ...]], batch_size: int) -> Iterator[list[int]]:
    """Indices of ``sequences`` in batches of ``batch_size``, longest first (the first
    batch shows at once whether the longest sequences fit in memory)."""
    order = sorted(range(len(sequences)), key=lambda i: -len(sequences[i]))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def padded(
    sequences: Sequence[tuple[int, ...]], pad_id: int
) -> tuple[list[list[int]], list[list[int]]]:
    """``(ids, mask)``: the sequences padded at the end to the longest, and which
    positions are tokens."""
    width = max(len(s) for s in sequences)
    ids = [[*s, *[pad_id] * (width - len(s))] for s in sequences]
    mask = [[1] * len(s) + [0] * (width - len(s)) for s in sequences]
    return ids, mask
