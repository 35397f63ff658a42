"""Tokenizing pairs for training: truncation only, never padding.

Padding happens per batch in ``DataCollatorForSeq2Seq``; padding every example to 128 in
preprocessing (the reference recipe) makes a step on ~30-token sentences ~4x slower.
"""

from __future__ import annotations

from typing import Any

from workbench.core.data.cleaning import TokenCounter
from workbench.core.data.pairs import Pair
from workbench.core.languages import Direction


def tokenize_pairs(
    pairs: list[Pair],
    tokenizer: Any,
    direction: Direction,
    max_source_length: int,
    max_target_length: int,
) -> Any:
    """A ``datasets.Dataset`` with input_ids, attention_mask and labels (unpadded).

    The sources get the direction's prefix (Marian's label, T5's task); the language
    codes of NLLB, M2M100 and mBART-50 come from the tokenizer's ``src_lang`` and
    ``tgt_lang``, which :func:`workbench.core.model.family.apply_direction` set.
    """
    import datasets

    sources = tokenizer(
        [direction.source_text(p.source) for p in pairs],
        max_length=max_source_length,
        truncation=True,
    )
    targets = tokenizer(
        text_target=[p.target for p in pairs], max_length=max_target_length, truncation=True
    )
    return datasets.Dataset.from_dict(
        {
            "input_ids": sources["input_ids"],
            "attention_mask": sources["attention_mask"],
            "labels": targets["input_ids"],
        }
    )


def token_counter(tokenizer: Any, direction: Direction) -> TokenCounter:
    """Token lengths as training counts them (the direction's prefix on each source), for
    the cleaning's ``long`` rule."""

    def count(sources: list[str], targets: list[str]) -> tuple[list[int], list[int]]:
        source_ids = (
            tokenizer([direction.source_text(s) for s in sources])["input_ids"] if sources else []
        )
        target_ids = tokenizer(text_target=targets)["input_ids"] if targets else []
        return [len(ids) for ids in source_ids], [len(ids) for ids in target_ids]

    return count
