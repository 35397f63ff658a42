"""Where a decoder-only translator's attention goes: the Lab's attention study for a model
with no encoder and no cross-attention (Q6(c)), measured on one sentence.

A seq2seq model reads the source with an encoder and looks at it through cross-attention
(:mod:`workbench.core.lab.attention_kinds`). A decoder-only model has one stack and one
attention: the source sits inside a prompt, and the translation is what the model writes
after it, each token attending to everything before it. This study translates the
sentence exactly as the heatmap does
(:func:`~workbench.core.attention.causal.causal_pass`) and measures, on that sequence:

- where the source sits: the prompt's token ranges (the instruction before the source,
  the source, the instruction after it and the turn markers) and the translation's;
- that the causal mask is the only mask: every weight above the diagonal is exactly 0,
  none on or below it is, and with the sequence left-padded as a batch pads a shorter
  prompt, no real position gives a pad token any weight;
- per layer, the share of the translation rows' attention on the source, on the
  instruction and on the translation itself (each row sums to 1 over all of them).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import numpy as np

from workbench.core.attention.causal import CausalPass, causal_map, causal_pass, self_attention
from workbench.core.attention.extract import AttentionModel
from workbench.core.records.typed import from_one_based, read_with
from workbench.errors import WorkbenchError

#: Pad tokens put before the sequence for the padding check, as a batch pads a prompt
#: shorter than its neighbour's on the left; any number above 0 shows whether they are
#: masked.
PADDING = 3

#: The parts of the sequence, in order, and what the study calls them.
PART_NAMES = {
    "before": "instruction before the source",
    "source": "source",
    "after": "instruction after the source, turn markers",
    "translation": "translation",
}


@dataclass(frozen=True)
class PromptPart:
    """One stretch of the sequence: tokens ``start`` to ``stop`` (exclusive) and their text."""

    name: str  # a key of PART_NAMES
    start: int
    stop: int
    text: str  # decoded with its special tokens (turn markers), as the model read it

    @property
    def tokens(self) -> int:
        """How many tokens the part has."""
        return self.stop - self.start


@dataclass(frozen=True)
class MaskCheck:
    """What masks the self-attention, measured over every layer, head, row and column."""

    above_diagonal: float  # the largest weight above the diagonal (the future)
    zeros_below: int  # weights exactly 0 on or below it: another mask would make them
    row_sum_error: float  # the largest distance of a row's sum from 1
    padding: int  # pad tokens put on the left for the padded pass
    on_padding: float  # the largest weight a real position gave a pad token there
    padded_difference: float  # the largest change of a real weight once padded

    @property
    def causal_only(self) -> bool:
        """The future is never read and everything before it is: no mask but the causal one."""
        return self.above_diagonal == 0.0 and self.zeros_below == 0


@dataclass(frozen=True)
class LayerShare:
    """Where the translation's rows look in one layer, as shares of their attention (the
    mean over heads and rows); ``before + source + after + translation`` is 1."""

    layer: int = field(metadata=read_with(from_one_based))  # 0-based here, 1-based in JSON
    before: float
    source: float
    after: float
    translation: float  # the translation's own tokens, those already written
    first_token: float  # the sequence's first token alone (counted in its part too)

    @property
    def instruction(self) -> float:
        """The prompt around the source: before it and after it."""
        return self.before + self.after

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON, the layer 1-based as the CLI prints it."""
        data = {k: round(v, 6) if isinstance(v, float) else v for k, v in asdict(self).items()}
        return {**data, "layer": self.layer + 1}


@dataclass
class PromptAttention:
    """The prompt study of one sentence: the parts, the mask, the shares per layer."""

    model: str
    sentence: str
    translation: str
    prompt: str  # chat, alma, seed-x or template
    parts: list[PromptPart]
    mask: MaskCheck
    layers: list[LayerShare]
    heads: int
    num_beams: int = 1

    #: Written for the file to read alone (:func:`findings`), derived again when read.
    WRITTEN_ONLY: ClassVar[tuple[str, ...]] = ("findings",)

    def part(self, name: str) -> PromptPart:
        """The part called ``name`` (a key of PART_NAMES)."""
        return next(p for p in self.parts if p.name == name)

    def to_dict(self) -> dict[str, Any]:
        """Everything measured, and the findings in words, for ``lab_prompt_attention.json``."""
        return {
            "model": self.model,
            "sentence": self.sentence,
            "translation": self.translation,
            "prompt": self.prompt,
            "heads": self.heads,
            "num_beams": self.num_beams,
            "parts": [asdict(p) for p in self.parts],
            "mask": asdict(self.mask),
            "layers": [row.to_dict() for row in self.layers],
            "findings": findings(self),
        }


def prompt_attention(
    loaded: AttentionModel,
    sentence: str,
    num_beams: int | None = None,
    max_new_tokens: int | None = None,
) -> PromptAttention:
    """Translate ``sentence`` as ``loaded.map`` does and measure where its attention goes."""
    direction = loaded.direction
    if not direction.causal:
        raise WorkbenchError(
            f"{loaded.name} is a seq2seq model: its source has an encoder and "
            "cross-attention of its own (the attention kinds study), not a place in a prompt"
        )
    options = loaded.options(num_beams, max_new_tokens)
    run = causal_pass(loaded.model, loaded.tokenizer, sentence, direction, options)
    amap = causal_map(loaded.tokenizer, sentence, run, direction, options.num_beams)
    padded = self_attention(loaded.model, run.sequence, PADDING)
    return PromptAttention(
        model=loaded.name,
        sentence=amap.sentence,
        translation=amap.translation,
        prompt=direction.prompt or "",
        parts=prompt_parts(loaded.tokenizer, run),
        mask=mask_check(run.weights, padded, PADDING),
        layers=layer_shares(run),
        heads=int(run.weights.shape[1]),
        num_beams=options.num_beams,
    )


def part_ranges(run: CausalPass) -> dict[str, range]:
    """Each part's tokens in the sequence: the prompt's three, then the translation's."""
    prompt = run.prompt
    written = len(prompt.ids)
    return {
        "before": prompt.before,
        "source": prompt.source,
        "after": prompt.after,
        "translation": range(written, written + len(run.written)),
    }


def prompt_parts(tokenizer: Any, run: CausalPass) -> list[PromptPart]:
    """The parts with their text, special tokens kept (the turn markers are the point)."""
    ids = run.prompt.ids + run.written
    return [
        PromptPart(name, span.start, span.stop, str(tokenizer.decode(ids[span.start : span.stop])))
        for name, span in part_ranges(run).items()
    ]


def mask_check(weights: np.ndarray, padded: np.ndarray, padding: int) -> MaskCheck:
    """Measure the masks of ``weights`` ``[layers, heads, n, n]``, and of ``padded``, the
    same pass with ``padding`` masked pad tokens before it."""
    n = weights.shape[-1]
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    real = padded[:, :, padding:, :]  # the pad tokens' own rows read nothing that counts
    return MaskCheck(
        above_diagonal=float(weights[:, :, future].max()) if n > 1 else 0.0,
        zeros_below=int((weights[:, :, ~future] == 0.0).sum()),
        row_sum_error=float(np.abs(weights.astype(np.float64).sum(axis=-1) - 1.0).max()),
        padding=padding,
        on_padding=float(real[..., :padding].max()) if padding else 0.0,
        padded_difference=float(np.abs(real[..., padding:] - weights).max()),
    )


def layer_shares(run: CausalPass) -> list[LayerShare]:
    """Per layer, the translation rows' mean attention on each part (and the first token)."""
    rows = run.weights[:, :, run.rows.start : run.rows.stop, :].astype(np.float64)
    per_layer = rows.mean(axis=(1, 2))  # [layers, columns]
    spans = part_ranges(run)
    shares = []
    for layer, columns in enumerate(per_layer):
        share = {name: float(columns[span.start : span.stop].sum()) for name, span in spans.items()}
        shares.append(LayerShare(layer=layer, first_token=float(columns[0]), **share))
    return shares


# --------------------------------------------------------------------------- in words


def _shown(text: str, width: int = 60) -> str:
    """A part's text on one line: line breaks visible, cut to ``width`` characters."""
    flat = repr(text)[1:-1]
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def findings(study: PromptAttention) -> str:
    """What the numbers show, in two or three sentences."""
    layers = study.layers
    count = len(layers)
    source = sum(row.source for row in layers) / count
    instruction = sum(row.instruction for row in layers) / count
    own = sum(row.translation for row in layers) / count
    first = sum(row.first_token for row in layers) / count
    most = max(layers, key=lambda row: row.source)
    mask = (
        "The causal mask is the only mask: nothing above the diagonal, nothing on or below "
        "it masked, and left padding gets no weight."
        if study.mask.causal_only and study.mask.on_padding == 0.0
        else "Something besides the causal mask shapes the attention: see the mask lines."
    )
    return (
        f"{mask} Averaged over the {count} layers, the translation's tokens give the source "
        f"{source:.0%} of their attention, the instruction around it {instruction:.0%} and "
        f"the translation written so far {own:.0%}; layer {most.layer + 1} looks at the "
        f"source most ({most.source:.0%}). The first token alone takes {first:.0%}."
    )


def prompt_attention_text(study: PromptAttention) -> str:
    """The study as ``workbench lab attention`` prints it for a decoder-only model."""
    mask = study.mask
    total = study.parts[-1].stop - 1  # the pass reads all but the last written token
    lines = [
        f"decoder-only model ({study.prompt} prompt): no encoder and no cross-attention; the "
        "source sits inside the prompt and the translation reads it through the one causal "
        "self-attention",
        f"source:      {study.sentence}",
        f"translation: {study.translation or '(empty)'}",
        "",
        "where the source sits (tokens of the sequence, 0-based)",
        f"{'part':<44} {'tokens':>6} {'range':>9}  text",
    ]
    for part in study.parts:
        span = f"{part.start}–{part.stop - 1}" if part.tokens else "-"
        lines.append(
            f"{PART_NAMES.get(part.name, part.name):<44} {part.tokens:>6} {span:>9}  "
            f"{_shown(part.text)}"
        )
    lines += [
        "",
        f"the mask (every layer and head, {total} positions read)",
        f"  above the diagonal: largest weight {mask.above_diagonal:.3g} (0: the future is "
        "never read)",
        f"  on or below the diagonal: {mask.zeros_below} weights exactly 0 (0: nothing else "
        "is masked, no padding, no window)",
        f"  every row sums to 1 within {mask.row_sum_error:.1e}",
        f"  left-padded by {mask.padding} pad tokens, as a batch pads a shorter prompt: "
        f"largest weight on a pad {mask.on_padding:.3g}, real weights changed by at most "
        f"{mask.padded_difference:.1e}",
        "  the causal mask is the only mask"
        if mask.causal_only
        else "  the causal mask is NOT the only mask: see the lines above",
        "",
        f"where the translation's rows look, per layer (mean of {study.heads} heads and "
        f"{study.part('translation').tokens} rows; the four parts sum to 100%)",
        f"{'layer':>5} {'before':>8} {'source':>8} {'after':>8} {'translation':>12} "
        f"{'instruction':>12} {'first token':>12}",
    ]
    for row in study.layers:
        lines.append(
            f"{row.layer + 1:>5} {row.before:>8.1%} {row.source:>8.1%} {row.after:>8.1%} "
            f"{row.translation:>12.1%} {row.instruction:>12.1%} {row.first_token:>12.1%}"
        )
    lines += [
        "before/after: the instruction before and after the source (instruction = both) · "
        "first token: already counted in its part",
        "",
        findings(study),
    ]
    return "\n".join(lines)
