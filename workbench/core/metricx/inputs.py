"""MetricX's inputs as token ids, equal to what google-research/metricx's ``predict.py``
feeds its model.

``predict.py`` tokenizes each input string with ``max_length`` and ``truncation=True``, no
padding, then drops the last id: the EOS the tokenizer appended (after a cut too, so a cut
input keeps ``max_length - 1`` ids). It runs on transformers 4.30, whose fast T5 tokenizer
adds a lone ``▁`` piece to a text that ends in whitespace (an empty hypothesis in QE mode,
an empty reference); sentencepiece and transformers 5 do not. The checkpoints were
published with that code, so that piece is added here too, where the text ends in
whitespace and the vocabulary has the piece (``tests/fixtures/metricx`` holds the
reference tokenizer's ids for such inputs).

Batches are made of inputs of similar length, padded on the right with mT5's pad id 0 and
masked; each score is put back in its segment's place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: SentencePiece's word-boundary piece, which transformers 4.30 adds after trailing space.
WORD_BOUNDARY = "▁"
#: mT5's pad id: what a batch is padded with.
PAD_ID = 0


@dataclass(frozen=True)
class InputTokenizer:
    """mT5's tokenizer, cutting and ending inputs as ``predict.py`` does."""

    tokenizer: Any
    max_length: int

    def __post_init__(self) -> None:
        if self.max_length < 2:
            raise ValueError("max_length counts the EOS that is then dropped: 2 or more")

    @property
    def boundary_id(self) -> int | None:
        """The lone ``▁`` piece's id, or None where the vocabulary has none."""
        found = self.tokenizer.convert_tokens_to_ids(WORD_BOUNDARY)
        return None if found is None or found == self.tokenizer.unk_token_id else int(found)

    def __call__(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's ids: at most ``max_length - 1``, no EOS."""
        encoded = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        boundary = self.boundary_id
        out = []
        for text, ids in zip(texts, encoded, strict=True):
            ids = list(ids)
            if boundary is not None and text[-1:].isspace():
                ids.append(boundary)
            out.append(ids[: self.max_length - 1])
        return out


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length, longest first (less padding)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def padded(rows: Sequence[Sequence[int]]) -> tuple[list[list[int]], list[list[int]]]:
    """Rows padded on the right to the longest with :data:`PAD_ID`, and their masks."""
    longest = max(len(r) for r in rows)
    ids = [list(r) + [PAD_ID] * (longest - len(r)) for r in rows]
    mask = [[1] * len(r) + [0] * (longest - len(r)) for r in rows]
    return ids, mask
