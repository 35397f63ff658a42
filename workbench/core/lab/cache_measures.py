"""How the KV-cache study measures a model: greedy ``generate`` timed with and without the
cache, and the floats the cache it returns holds, counted from the tensors themselves.

Both take the model as it was loaded and give plain numbers; what they mean against the
formula, and the records they are kept in, is :mod:`workbench.core.lab.kv_cache`'s.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from workbench.errors import WorkbenchError


class GreedyDecoder:
    """``generate`` forced to exactly ``steps`` new tokens, with or without the cache.

    Plain greedy: the saved model's beams and n-gram blocking would time the search, not
    the cache.
    """

    def __init__(self, model: Any) -> None:
        self.model = model

    def __call__(self, ids: Any, steps: int, use_cache: bool, **extra: Any) -> Any:
        """The output of one ``generate`` call on the source ``ids`` (batch 1)."""
        import torch

        with torch.inference_mode():
            return self.model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                num_beams=1,
                do_sample=False,
                no_repeat_ngram_size=0,
                max_new_tokens=steps,
                min_new_tokens=steps,
                use_cache=use_cache,
                **extra,
            )


@contextmanager
def one_thread() -> Iterator[None]:
    """torch on one thread while inside: a step multiplies matrices of a few hundred
    numbers, where more threads only add hand-offs, and on a shared machine they make the
    timings swing widely."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class TokenTimes(NamedTuple):
    """Median milliseconds per generated token at one length, and whether both modes gave
    the same token ids for every sentence and repeat."""

    ms_cached: float
    ms_uncached: float
    identical: bool


def time_per_token(
    decode: GreedyDecoder, sources: list[Any], steps: int, repeats: int
) -> TokenTimes:
    """Each sentence decoded to ``steps`` tokens, ``repeats`` times per mode: a whole
    ``generate`` call divided by the tokens (the encoder runs once either way), summed over
    the sentences, the median of the repeats."""
    per_mode: dict[bool, list[float]] = {True: [], False: []}
    identical = True
    for _ in range(repeats):
        outputs: dict[bool, list[list[int]]] = {}
        for use_cache in (True, False):  # alternated, so drift hits both alike
            start = time.perf_counter()
            outputs[use_cache] = [decode(ids, steps, use_cache)[0].tolist() for ids in sources]
            seconds = time.perf_counter() - start
            per_mode[use_cache].append(1000 * seconds / (steps * len(sources)))
        identical = identical and outputs[True] == outputs[False]
    return TokenTimes(
        round(statistics.median(per_mode[True]), 4),
        round(statistics.median(per_mode[False]), 4),
        identical,
    )


class CountedCache(NamedTuple):
    """What one returned cache holds: positions, floats on each side, and their size."""

    positions: int
    self_floats: int
    cross_floats: int
    bytes_per_float: int


def count_cache(output: Any, steps: int) -> CountedCache:
    """Count the floats in the cache a ``generate(..., return_dict_in_generate=True)`` of
    ``steps`` forced tokens kept."""
    new_tokens = int(output.sequences.shape[1]) - 1  # minus the decoder start token
    if new_tokens != steps:
        raise WorkbenchError(
            f"generate made {new_tokens} tokens where {steps} were forced; "
            "the model's generation config overrides min_new_tokens"
        )
    # transformers 5 names it ``cache``; 4.x called it ``past_key_values``.
    cache = getattr(output, "cache", None) or getattr(output, "past_key_values", None)
    if cache is None or not hasattr(cache, "self_attention_cache"):
        raise WorkbenchError(
            f"generate returned no encoder-decoder cache ({type(cache)}); "
            "this study needs transformers 5 with use_cache"
        )
    self_floats, item = _floats(cache.self_attention_cache)
    cross_floats, _ = _floats(cache.cross_attention_cache)
    positions = int(cache.self_attention_cache.get_seq_length())
    return CountedCache(positions, self_floats, cross_floats, item)


def _floats(part: Any) -> tuple[int, int]:
    """The floats in one side of a cache (its layers' keys and values), and bytes a float."""
    count, item = 0, 4
    for layer in part.layers:
        for tensor in (layer.keys, layer.values):
            if tensor is not None:
                count += tensor.numel()
                item = tensor.element_size()
    return count, item
