"""Synthetic sentence pairs whose lengths follow a model of WMT19 zh-en.

The real corpus and tokenizer are not available offline, and only lengths cost time: so
the pairs are random token ids with modelled lengths (``make_lengths``), written as text
for the word-level test tokenizer (``ids_to_text``). RESULTS.md's data section gives the
sources of the model's numbers.
"""

from __future__ import annotations

import math
import random
import statistics

from .model import PAD
from .recipes import BATCH, MAX_LEN
from .results import LengthStats

# Sentence lengths in subword tokens, </s> included (see make_lengths and RESULTS.md).
SOURCE_MEDIAN, SOURCE_SIGMA = 28.0, 0.6
RATIO_SIGMA = 0.25

IdPair = tuple[list[int], list[int]]  # source and target token ids, </s> not included


def make_lengths(n: int, seed: int) -> list[tuple[int, int]]:
    """(source, target) lengths in tokens, </s> included, modelled on WMT19 zh-en.

    Source ~ lognormal(ln 28, 0.6): median 28, mean ~33 subword tokens; target = source x
    lognormal(0, 0.25) (Chinese and English take similar numbers of pieces). Both clipped
    to [3, 128]; 128 is where the assignment truncates.
    """
    rng = random.Random(seed)
    lengths = []
    for _ in range(n):
        src = min(MAX_LEN, max(3, round(rng.lognormvariate(math.log(SOURCE_MEDIAN), SOURCE_SIGMA))))
        tgt = min(MAX_LEN, max(3, round(src * rng.lognormvariate(0.0, RATIO_SIGMA))))
        lengths.append((src, tgt))
    return lengths


def fill_ids(lengths: list[tuple[int, int]], seed: int) -> list[IdPair]:
    """Token ids (uniform over the vocabulary, no </s>: the tokenizer adds it) per pair."""
    rng = random.Random(seed)
    return [
        (
            [rng.randrange(2, PAD) for _ in range(src - 1)],
            [rng.randrange(2, PAD) for _ in range(tgt - 1)],
        )
        for src, tgt in lengths
    ]


def make_pairs(n: int, seed: int) -> list[IdPair]:
    """Random token-id pairs with WMT19-like lengths (make_lengths)."""
    return fill_ids(make_lengths(n, seed), seed + 1)


def length_strata(pairs: list[IdPair], batches: int, seed: int) -> list[IdPair]:
    """``batches`` batches of 16, spread evenly over ``pairs`` sorted by source length.

    A length-sorted evaluation of the whole set, in miniature: the workbench evaluates
    longest first (``recipe.longest_first``), so its batches over the kept pairs are
    these same homogeneous batches. Returned shuffled, since the reference evaluates in
    dataset order; its batches mix the strata, which run shorter than random batches of
    the whole set would (favouring the reference).
    """
    ranked = sorted(pairs, key=lambda p: len(p[0]), reverse=True)
    chunks = [ranked[i : i + BATCH] for i in range(0, len(ranked), BATCH)]
    kept = [p for i in range(batches) for p in chunks[int((i + 0.5) * len(chunks) / batches)]]
    random.Random(seed).shuffle(kept)
    return kept


def ids_to_text(ids: list[int]) -> str:
    """Text for the word-level test tokenizer: one word per token id."""
    return " ".join(f"t{i}" for i in ids)


def length_stats(lengths: list[int]) -> LengthStats:
    """Mean, median and tail of a list of lengths."""
    ordered = sorted(lengths)
    return {
        "mean": statistics.fmean(ordered),
        "median": statistics.median(ordered),
        "p90": ordered[int(0.9 * (len(ordered) - 1))],
        "p99": ordered[int(0.99 * (len(ordered) - 1))],
        "max": ordered[-1],
        "share_over_64": sum(v > 64 for v in ordered) / len(ordered),
    }
