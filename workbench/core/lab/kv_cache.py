"""The KV-cache study: what caching keys and values saves, and what it holds.

The assignment asks why a decoder caches K and V but not Q, and how many floats the cache
holds. At step t the new token's query attends to the keys and values of every position
so far; those keys and values never change once computed (causal masking), so they are
kept. The queries of past positions are never used again: each step needs only the new
token's query. Without the cache every step re-runs the decoder over the whole prefix,
and recomputes the cross-attention K/V from the encoder output in every layer too.

This module measures both halves on a real model: greedy ``generate`` timed with and
without the cache (same token ids required), and the floats actually held in the
``EncoderDecoderCache`` after t steps against the formula. How each is measured is
:mod:`workbench.core.lab.cache_measures`'s; the question, the records and the formula are
here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from workbench.core.decoding import LENGTH_CEILING, check_new_tokens
from workbench.core.lab.cache_measures import GreedyDecoder, count_cache, one_thread, time_per_token
from workbench.core.model.architecture import cache_shape
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.attention.extract import AttentionModel

#: Short everyday sentences like the demo data. Two are enough: every run is forced to
#: exactly t tokens, so the time per token hardly depends on the sentence.
DEFAULT_SENTENCES = (
    "I like to drink tea.",
    "Where is the train station?",
)
#: Output lengths t: doubling shows the uncached cost per token growing with t while the
#: cached cost stays flat; below 128 a small model's fixed cost per step hides the gap.
#: 2 sentences x 240 tokens x 2 modes x 3 repeats: about 20 s for the demo model on a
#: busy 2-core CPU.
DEFAULT_LENGTHS = (16, 32, 64, 128)


def self_attention_floats(layers: int, steps: int, d_model: int, batch: int = 1) -> int:
    """Decoder self-attention cache after ``steps`` steps: K and V, per layer, per position."""
    return 2 * layers * steps * d_model * batch


def cross_attention_floats(layers: int, source_tokens: int, d_model: int, batch: int = 1) -> int:
    """Cross-attention cache: K and V of every source token, per layer (fixed after step 1)."""
    return 2 * layers * source_tokens * d_model * batch


@dataclass(frozen=True)
class Timing:
    """Milliseconds per generated token at one output length, with and without the cache."""

    new_tokens: int
    ms_cached: float
    ms_uncached: float
    #: Whether both modes gave the same token ids for every sentence and repeat.
    identical: bool

    #: Written beside the fields for the file to read alone, derived again when read.
    WRITTEN_ONLY: ClassVar[tuple[str, ...]] = ("speedup",)

    @property
    def speedup(self) -> float:
        """How many times faster the cached run was."""
        return self.ms_uncached / self.ms_cached if self.ms_cached > 0 else float("inf")


@dataclass(frozen=True)
class CacheSize:
    """Floats in the cache after ``steps`` steps: measured next to the formula."""

    steps: int
    #: Positions the self-attention cache held (equals ``steps``; see :func:`cache_study`).
    positions: int
    self_measured: int
    self_formula: int
    cross_measured: int
    cross_formula: int
    bytes_per_float: int

    #: Written beside the fields for the file to read alone, derived again when read.
    WRITTEN_ONLY: ClassVar[tuple[str, ...]] = ("agrees", "total_bytes")

    @property
    def agrees(self) -> bool:
        """Whether both measured counts equal their formula."""
        return self.self_measured == self.self_formula and self.cross_measured == self.cross_formula

    @property
    def total_bytes(self) -> int:
        """Bytes the measured cache takes at the model's dtype."""
        return (self.self_measured + self.cross_measured) * self.bytes_per_float


@dataclass
class CacheStudy:
    """What :func:`cache_study` measured, with the model's shape the formula needs."""

    model_dir: str
    layers: int
    #: The width of K and V: heads x head_dim, the model's d_model except in T5 (d_kv·heads).
    d_model: int
    heads: int
    head_dim: int
    #: Source tokens S of the sentence whose cache was counted (incl. label and </s>).
    source_tokens: int
    size_sentence: str
    dtype: str
    sentences: list[str]
    repeats: int
    timings: list[Timing]
    sizes: list[CacheSize]

    #: Written beside the fields for the file to read alone (the formula in words too),
    #: derived again when read.
    WRITTEN_ONLY: ClassVar[tuple[str, ...]] = ("identical", "agrees", "formula")

    @property
    def identical(self) -> bool:
        """Whether caching never changed the output."""
        return all(row.identical for row in self.timings)

    @property
    def agrees(self) -> bool:
        """Whether every measured cache size equals the formula."""
        return all(size.agrees for size in self.sizes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values, derived numbers included so the file reads alone."""
        data = asdict(self)
        for row, timing in zip(data["timings"], self.timings, strict=True):
            row["speedup"] = round(timing.speedup, 3)
        for row, size in zip(data["sizes"], self.sizes, strict=True):
            row["agrees"] = size.agrees
            row["total_bytes"] = size.total_bytes
        data["identical"] = self.identical
        data["agrees"] = self.agrees
        data["formula"] = {
            "self_attention": "2 * L * t * d",
            "cross_attention": "2 * L * S * d",
            "t": "positions fed to the decoder: the start token and the first "
            "t-1 outputs, read after t tokens were generated",
        }
        return data


def cache_study(
    model_dir: str,
    sentences: list[str] | None = None,
    lengths: tuple[int, ...] | list[int] = DEFAULT_LENGTHS,
    repeats: int = 3,
    on_progress: Callable[[str, int, int], None] | None = None,
    stop: threading.Event | None = None,
) -> CacheStudy:
    """Time greedy decoding with and without the KV cache, and count what the cache holds.

    Each length t forces exactly t new tokens (``min_new_tokens = max_new_tokens = t``),
    so both modes do the same work; one sentence at a time (batch 1). The time per token
    is a whole ``generate`` call divided by t (the encoder runs once either way), summed
    over the sentences, the median of ``repeats``.

    What t means in the cache: generating t tokens takes t decoder steps, and step i feeds
    one position (the decoder start token, then outputs 1..t-1) and appends its K and V.
    The t-th output is returned but never fed back, so the cache ``generate`` hands back
    after t new tokens holds exactly t positions: self-attention 2·L·t·d floats. The
    cross-attention cache holds the encoder side once, 2·L·S·d floats, S the source tokens
    including the label and </s>. Both are counted from the cache tensors themselves.

    ``on_progress(name, done, total)`` is called before each length; setting ``stop`` ends
    the study between two lengths (WorkbenchError), so the TUI can show and stop it.
    """
    lengths, texts = _checked(sentences, lengths, repeats)
    loaded = _seq2seq_model(model_dir, max(lengths))
    model, tokenizer, direction = loaded.model, loaded.tokenizer, loaded.direction
    model.eval()
    sources = [
        tokenizer(
            [direction.source_text(text)],
            return_tensors="pt",
            truncation=True,
            max_length=direction.max_positions or LENGTH_CEILING,
        )["input_ids"]
        for text in texts
    ]
    # Each family's own config names (T5: num_decoder_layers, num_heads, d_kv).
    layers, heads, head_dim = cache_shape(model.config)
    d_model = heads * head_dim  # the width of K and V, which need not be the model's
    decode = GreedyDecoder(model)
    with one_thread():
        timings = _time_lengths(decode, sources, lengths, repeats, on_progress, stop)
    probe = sources[0]
    source_tokens = int(probe.shape[1])
    sizes = [
        _measure_size(
            decode(probe, steps, True, return_dict_in_generate=True),
            steps,
            layers,
            d_model,
            source_tokens,
        )
        for steps in lengths
    ]
    dtype = next(model.parameters()).dtype
    return CacheStudy(
        model_dir=str(model_dir),
        layers=layers,
        d_model=d_model,
        heads=heads,
        head_dim=head_dim,
        source_tokens=source_tokens,
        size_sentence=texts[0],
        dtype=str(dtype).removeprefix("torch."),
        sentences=texts,
        repeats=repeats,
        timings=timings,
        sizes=sizes,
    )


def _checked(
    sentences: list[str] | None, lengths: tuple[int, ...] | list[int], repeats: int
) -> tuple[list[int], list[str]]:
    """The output lengths and the sentences to decode, or one line saying what to pass:
    checked before a model is loaded."""
    if repeats < 1:
        raise WorkbenchError(f"repeats must be at least 1, got {repeats}; use 3 or more")
    checked = [check_new_tokens(int(t), "output length") for t in lengths]
    if not checked:
        raise WorkbenchError("no output lengths given; pass some, e.g. 16 32 64 128")
    texts = [text for text in (sentences or DEFAULT_SENTENCES) if text.strip()]
    if not texts:
        raise WorkbenchError("no sentences to decode; pass at least one non-empty sentence")
    return checked, texts


def _seq2seq_model(model_dir: str, longest: int) -> AttentionModel:
    """The model, loaded as every study and front end loads it (its label checked), or one
    line when it is decoder-only or ``longest`` outputs do not fit its positions."""
    from workbench.core.attention.extract import load_attention_model

    loaded = load_attention_model(model_dir)
    direction = loaded.direction
    if direction.causal:  # its formula and its forced decoding are a seq2seq decoder's
        raise WorkbenchError(
            f"the cache study measures a seq2seq decoder's self- and cross-attention cache; "
            f"{model_dir} is a decoder-only model: run workbench lab attention on it"
        )
    if direction.max_positions is not None and longest >= direction.max_positions:
        raise WorkbenchError(
            f"output length {longest} does not fit this model's "
            f"{direction.max_positions} positions; pass lengths up to "
            f"{direction.max_positions - 1}"
        )
    return loaded


def _time_lengths(
    decode: GreedyDecoder,
    sources: list[Any],
    lengths: list[int],
    repeats: int,
    on_progress: Callable[[str, int, int], None] | None = None,
    stop: threading.Event | None = None,
) -> list[Timing]:
    """Median ms per generated token at each length, cached and not, and whether they agree."""
    decode(sources[0], 2, True)  # warm-up: the first call pays one-off setup
    timings = []
    for done, steps in enumerate(lengths):
        if stop is not None and stop.is_set():
            raise WorkbenchError("the cache study was stopped before it finished")
        if on_progress:
            on_progress(f"t={steps}", done, len(lengths))
        times = time_per_token(decode, sources, steps, repeats)
        timings.append(Timing(steps, times.ms_cached, times.ms_uncached, times.identical))
    return timings


def _measure_size(
    output: Any, steps: int, layers: int, d_model: int, source_tokens: int
) -> CacheSize:
    """The cache a ``generate(..., return_dict_in_generate=True)`` kept, against the formula."""
    counted = count_cache(output, steps)
    return CacheSize(
        steps=steps,
        positions=counted.positions,
        self_measured=counted.self_floats,
        self_formula=self_attention_floats(layers, steps, d_model),
        cross_measured=counted.cross_floats,
        cross_formula=cross_attention_floats(layers, source_tokens, d_model),
        bytes_per_float=counted.bytes_per_float,
    )
