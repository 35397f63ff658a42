"""Token ids of many sentences at once, for the tokenizer whose Python path is the cost.

transformers has no fast (Rust) tokenizer for Marian (OPUS-MT): ``MarianTokenizer`` runs
SentencePiece on one sentence at a time and then turns each piece into an id through
several Python calls, so SentencePiece is under a fifth of the time it takes to tokenize
a corpus. A Marian tokenizer is a SentencePiece model per side and a vocabulary, so a
batch can go through SentencePiece's C++ ``encode`` at once and through one dict lookup
per piece; that is what :func:`batch_ids` does, three to four times faster (20,000 pairs).

The shortcut takes the tokenizer's own steps: the leading language label split off as
the tokenizer splits it, the side's SentencePiece model, added tokens looked up before
the side's vocabulary, an unknown piece as the side's ``<unk>``, ``</s>`` at the end. A
sentence holding an added or special token such as ``</s>`` (which the tokenizer splits
out before SentencePiece sees the text) goes through the tokenizer. The first sentences
of every batch are also encoded both ways, and a difference sends the batch to the
tokenizer: that catches a transformers release whose MarianTokenizer works otherwise, not
a difference in one sentence further on. Any other tokenizer is simply called.
"""

from __future__ import annotations

import re
from typing import Any

#: The tokenizer class the shortcut is exact for, by name (data/ imports no transformers).
_MARIAN = ("transformers.models.marian.tokenization_marian", "MarianTokenizer")
#: Sentences per SentencePiece call: their pieces (strings) live only until mapped to ids.
CHUNK = 1024
#: Sentences of each batch encoded both ways; any difference sends the batch to the tokenizer.
CHECKED = 16


def batch_ids(tokenizer: Any, texts: list[str], target: bool = False) -> list[list[int]]:
    """Each text's ids as ``tokenizer(texts)`` (``text_target=`` when ``target``) gives
    them, special tokens included and nothing truncated or padded."""
    pieces = _Pieces.of(tokenizer, target)
    if pieces is not None:
        ids = pieces.ids(texts)
        if ids[:CHECKED] == _called(tokenizer, texts[:CHECKED], target):
            return ids
    return _called(tokenizer, texts, target)


def _called(tokenizer: Any, texts: list[str], target: bool) -> list[list[int]]:
    if not texts:
        return []
    encoded = tokenizer(text_target=texts) if target else tokenizer(texts)
    return list(encoded["input_ids"])


class _Pieces:
    """One side of a Marian tokenizer: its SentencePiece model and its piece-to-id map."""

    def __init__(self, tokenizer: Any, target: bool) -> None:
        self.tokenizer = tokenizer
        self.target = target
        self.spm = tokenizer.spm_target if target else tokenizer.spm_source
        vocabulary = tokenizer.target_encoder if target and tokenizer.separate_vocabs else None
        added = dict(tokenizer._added_tokens_encoder)
        # The tokenizer looks a piece up among the added tokens first, then the vocabulary.
        self.lookup = {**(vocabulary or tokenizer.encoder), **added}
        # An unknown piece is the side's own <unk> (the added token's id is the source's).
        self.unknown = (vocabulary or tokenizer.encoder)[tokenizer.unk_token]
        self.end = [tokenizer.eos_token_id]
        special = sorted({*added, *tokenizer.all_special_tokens}, key=len, reverse=True)
        self.special = re.compile("|".join(map(re.escape, special))) if special else None

    @classmethod
    def of(cls, tokenizer: Any, target: bool) -> _Pieces | None:
        """The shortcut for exactly ``MarianTokenizer`` with deterministic SentencePiece
        settings (no subword sampling); None for any other tokenizer."""
        kind = type(tokenizer)
        if (kind.__module__, kind.__name__) != _MARIAN or tokenizer.sp_model_kwargs:
            return None
        if getattr(tokenizer, "split_special_tokens", False):
            return None
        return cls(tokenizer, target)

    def ids(self, texts: list[str]) -> list[list[int]]:
        """The ids of every text, by SentencePiece in one call where the text allows."""
        plain: list[int] = []  # the texts SentencePiece takes, by index
        bodies: list[str] = []  # each one's text past a leading label (``>>cmn_Hans<<``)
        labels: list[str] = []  # that label, or ""
        for i, text in enumerate(texts):
            if self.special is not None and self.special.search(text):
                continue
            label, body = self.tokenizer.remove_language_code(text)
            plain.append(i)
            bodies.append(body)
            labels.append(label[0] if label else "")
        lookup, unknown, end = self.lookup, self.unknown, self.end
        label_ids: dict[str, list[int]] = {"": []}
        out: list[list[int]] = [[] for _ in texts]
        for start in range(0, len(plain), CHUNK):
            chunk = slice(start, start + CHUNK)
            # One thread: the feature workers are the parallelism (one per core).
            pieces = self.spm.encode(bodies[chunk], out_type=str, num_threads=1)
            for i, label, sentence in zip(plain[chunk], labels[chunk], pieces, strict=True):
                if label not in label_ids:
                    label_ids[label] = [lookup.get(label, unknown)]
                out[i] = [*label_ids[label], *[lookup.get(p, unknown) for p in sentence], *end]
        if len(plain) < len(texts):
            taken = set(plain)
            rest = [i for i in range(len(texts)) if i not in taken]
            slow = _called(self.tokenizer, [texts[i] for i in rest], self.target)
            for i, ids in zip(rest, slow, strict=True):
                out[i] = ids
        return out
