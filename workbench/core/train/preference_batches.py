"""A preference run's training rows and batches: each source with its chosen and its
rejected translation, tokenized as supervised training tokenizes a pair, and collated
into one batch of both sides.

Both sides go through :meth:`~workbench.core.data.tokenize.PairTokenizer.encode`, so a
chosen translation's ids are exactly those ``--objective sft`` would train on (the same
prompt for a decoder-only model, its labels -100 over the prompt, the same truncation).

A batch of B pairs is one batch of 2B rows, the B chosen rows first and then the B
rejected ones in the same order: one forward pass scores both sides (trl's "concatenated
forward"), which keeps the two sides' padding, dropout masks and batch statistics in one
pass and costs one call. The halves stay implicit: the first half is always the chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workbench.core.data.tokenize import IGNORED, TOKEN_COLUMNS, PairTokenizer

#: A preference row's two sides, as the dataset's columns prefix them.
SIDES = ("chosen", "rejected")


def preference_dataset(
    rows: Sequence[tuple[str, str, str]], encoder: PairTokenizer
) -> tuple[Any, list[int]]:
    """The Trainer's dataset of ``(source, chosen, rejected)`` rows and each row's source
    length in tokens (what the length-grouped sampler groups by).

    Columns: ``chosen_input_ids``, ``chosen_attention_mask``, ``chosen_labels``, the same
    three for ``rejected``, and ``input_ids``: the source's ids (seq2seq) or the prompt's
    (decoder-only), which the sampler reads when it is given no lengths.
    """
    import datasets

    sources = [row[0] for row in rows]
    columns: dict[str, list[Any]] = {}
    for index, side in enumerate(SIDES, start=1):
        encoded = encoder.encode(sources, [row[index] for row in rows])
        for name in TOKEN_COLUMNS:
            columns[f"{side}_{name}"] = encoded[name]
    columns["input_ids"] = [
        _source_ids(ids, labels, encoder.direction.causal)
        for ids, labels in zip(columns["chosen_input_ids"], columns["chosen_labels"], strict=True)
    ]
    dataset = datasets.Dataset.from_dict(columns)
    return dataset, [len(ids) for ids in columns["input_ids"]]


def _source_ids(ids: list[int], labels: list[int], causal: bool) -> list[int]:
    """The source's ids of a tokenized row: a seq2seq row's input, or a decoder-only
    row's prompt (its start, the positions labelled -100)."""
    if not causal:
        return list(ids)
    prompt = next((i for i, label in enumerate(labels) if label != IGNORED), len(labels))
    return list(ids[:prompt])


class PreferenceCollator:
    """Preference rows collated as one batch of 2B rows, chosen first, by the collator
    of the model's kind: :class:`~.batches.DecoderInputsCollator` for seq2seq (which adds
    ``decoder_input_ids``) or :class:`~.batches.PromptCollator` for decoder-only (padded
    on the right).

    ``side_collator`` takes rows of ``input_ids``, ``attention_mask`` and ``labels``.
    Ordinary rows (the validation set's, which the Trainer collates with the same
    collator) go to it as they are.
    """

    def __init__(self, side_collator: Callable[[list[dict[str, Any]]], dict[str, Any]]) -> None:
        self.side_collator = side_collator

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        """The padded batch: rows 0..B-1 the chosen sides, B..2B-1 the rejected ones."""
        if f"{SIDES[0]}_input_ids" not in features[0]:
            return dict(self.side_collator(features))
        rows = [
            {name: list(feature[f"{side}_{name}"]) for name in TOKEN_COLUMNS}
            for side in SIDES
            for feature in features
        ]
        return dict(self.side_collator(rows))


def preference_collator(tokenizer: Any, model: Any, causal: bool) -> PreferenceCollator:
    """The :class:`PreferenceCollator` of a run's model kind, over the collator its
    supervised training uses."""
    from workbench.core.train.batches import pair_collator

    side: Callable[[list[dict[str, Any]]], dict[str, Any]] = pair_collator(tokenizer, model, causal)
    return PreferenceCollator(side)
