"""A decoder-only translator's attention over the source inside its prompt.

A decoder-only model (Qwen3, ALMA's Llama, Gemma, Seed-X's Mistral) has no encoder and
no cross-attention: the source is part of a prompt, and each token of the translation
attends, through the one causal self-attention, to the whole prompt and to the tokens
written before it. The honest counterpart of a seq2seq heatmap is therefore a slice of
that self-attention: rows are the translation's tokens, columns the source's tokens inside
the prompt. A row's cells no longer sum to 1: the rest of its attention went to the
instruction around the source and to the translation itself (the Lab's prompt study,
:mod:`workbench.core.lab.prompt_attention`, measures where).

:func:`causal_pass` translates as the Translator does (the same prompt ids, greedy unless
the model asks for beams, the same stops and length bound), then runs one forward pass
with the weights returned over the prompt and the translation; :func:`causal_map` cuts the
heatmap's :class:`~workbench.core.attention.grid.AttentionMap` out of it. The source's
columns are found by the fast tokenizer's offsets against
:meth:`~workbench.core.languages.Direction.source_span`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.attention.eager import check_weights, eager_attention
from workbench.core.attention.grid import AttentionMap, check_source_tokens, special_flags
from workbench.core.decoding import DecodeOptions, clean_input, length_bound
from workbench.core.languages import Direction
from workbench.errors import WorkbenchError

#: What a decoder-only model's heatmap shows, as its titles say it.
CAUSAL_ATTENTION = (
    "self-attention of the translation over the source inside the prompt "
    "(decoder-only: no cross-attention)"
)
#: The legend's bracket and axes lines for it: a row's cells are shares of the whole row.
CAUSAL_AXES = (
    "[ ] strongest source token for each row",
    "rows: translation, columns: the source inside the prompt (the rest of each row "
    "went to the instruction and the translation)",
)


@dataclass(frozen=True)
class PromptTokens:
    """A prompt's token ids and where the source's tokens are among them."""

    ids: list[int]
    source: range  # the source's tokens; before them the instruction, after them its end

    @property
    def before(self) -> range:
        """The prompt's tokens before the source (the instruction, a turn's start)."""
        return range(0, self.source.start)

    @property
    def after(self) -> range:
        """The prompt's tokens after the source (the rest of the instruction, turn markers)."""
        return range(self.source.stop, len(self.ids))


def source_columns(tokenizer: Any, text: str, span: tuple[int, int], ids: list[int]) -> range:
    """The tokens of ``ids`` (``text`` tokenized) that hold characters of ``span``.

    A fast tokenizer's offsets say it exactly: every token overlapping the span counts (a
    SentencePiece "▁I" carries the space before the source too). A slow tokenizer has no
    offsets: the text up to the span's start and up to its end are tokenized instead,
    which is exact unless a token straddles an edge.
    """
    start, end = span
    if getattr(tokenizer, "is_fast", False):
        offsets = tokenizer(text, return_offsets_mapping=True)["offset_mapping"]
        inside = [i for i, (a, b) in enumerate(offsets) if a < end and b > start and b > a]
        return range(inside[0], inside[-1] + 1) if inside else range(0)
    first = len(tokenizer(text[:start])["input_ids"])
    last = len(tokenizer(text[:end])["input_ids"])
    return range(min(first, len(ids)), min(last, len(ids)))


def prompt_tokens(tokenizer: Any, sentence: str, direction: Direction) -> PromptTokens:
    """The prompt's ids as the Translator feeds them, and the source's place among them."""
    cleaned = clean_input(sentence)
    if not cleaned:
        raise WorkbenchError(
            "empty sentence: give the text to look at, e.g. "
            'workbench attention "I like to drink tea."'
        )
    text = direction.source_text(cleaned)
    ids = [int(i) for i in tokenizer(text)["input_ids"]]
    source = source_columns(tokenizer, text, direction.source_span(cleaned), ids)
    if not source:
        raise WorkbenchError(
            f"the source's tokens could not be found inside the {direction.prompt} prompt; "
            "use a model with a fast tokenizer (tokenizer.json)"
        )
    check_source_tokens(len(source), cleaned)
    if direction.max_positions is not None and len(ids) >= direction.max_positions:
        raise WorkbenchError(
            f"the prompt with this sentence is {len(ids):,} tokens and the model has "
            f"{direction.max_positions:,} positions, none left for a translation: pass a "
            "shorter sentence"
        )
    return PromptTokens(ids, source)


def new_token_bound(
    tokenizer: Any, prompt: PromptTokens, direction: Direction, options: DecodeOptions
) -> int:
    """New tokens allowed, as the Translator bounds them: by the source's own length (the
    prompt not counted) and by the positions the prompt leaves."""
    from workbench.core.model.prompts import prompt_overhead

    bound = length_bound(
        len(prompt.ids) - prompt_overhead(tokenizer, direction), options.max_new_tokens
    )
    if direction.max_positions:
        bound = min(bound, direction.max_positions - len(prompt.ids))
    return max(1, bound)


def stop_ids(model: Any, direction: Direction) -> set[int]:
    """Every id generation ends at: the direction's stops and the model's own EOS ids."""
    eos = model.generation_config.eos_token_id
    own = eos if isinstance(eos, list) else [] if eos is None else [eos]
    return {int(i) for i in own} | set(direction.stop_ids)


def generate_translation(
    model: Any, tokenizer: Any, prompt: PromptTokens, direction: Direction, options: DecodeOptions
) -> list[int]:
    """The new tokens the model writes after the prompt (the stop token last, when one came),
    decoded as ``TransformersBackend.generate_ids`` decodes one prompt."""
    import torch

    ids = torch.tensor([prompt.ids], device=next(model.parameters()).device)
    model.eval()
    with torch.inference_mode():
        out = model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            num_beams=options.num_beams,
            max_new_tokens=new_token_bound(tokenizer, prompt, direction, options),
            no_repeat_ngram_size=options.no_repeat_ngram_size,
            **options.sampling_kwargs(),
        )
    written = [int(t) for t in out[0][len(prompt.ids) :]]
    stops = stop_ids(model, direction)
    end = next((i for i, t in enumerate(written) if t in stops), None)
    return written if end is None else written[: end + 1]


def self_attention(model: Any, ids: list[int], padding: int = 0) -> np.ndarray:
    """The self-attention of one forward pass over ``ids``, ``[layers, heads, rows, cols]``.

    ``padding`` puts that many pad tokens on the left, masked out, as a batch pads a
    shorter prompt; position ids then start at the first real token, as ``generate``
    counts them, and the result covers the padded sequence.
    """
    import torch

    pad = model.config.pad_token_id  # any id would do: the mask hides it
    pad = int(pad) if pad is not None else ids[0]
    device = next(model.parameters()).device
    tokens = torch.tensor([[pad] * padding + ids], device=device)
    mask = torch.tensor([[0] * padding + [1] * len(ids)], device=device)
    positions = torch.tensor([[0] * padding + list(range(len(ids)))], device=device)
    with torch.inference_mode(), eager_attention(model):
        out = model(
            input_ids=tokens,
            attention_mask=mask,
            position_ids=positions,
            output_attentions=True,
            use_cache=False,
        )
    check_weights(out.attentions)
    return torch.stack([a[0] for a in out.attentions]).float().cpu().numpy()


@dataclass
class CausalPass:
    """One translation and the full self-attention over prompt and translation.

    The forward pass reads the prompt and every written token but the last: position
    ``t`` predicts token ``t + 1``, so the translation's rows are the positions from the
    prompt's last token on (row ``k`` of :attr:`rows` produced ``written[k]``).
    """

    prompt: PromptTokens
    written: list[int]  # the new tokens, the stop token last when one came
    weights: np.ndarray  # [layers, heads, n, n] over prompt + written[:-1]

    @property
    def rows(self) -> range:
        """The positions that produced the translation's tokens."""
        start = len(self.prompt.ids) - 1
        return range(start, start + len(self.written))

    @property
    def sequence(self) -> list[int]:
        """What the forward pass read: the prompt and the translation but its last token."""
        return self.prompt.ids + self.written[:-1]


def causal_pass(
    model: Any, tokenizer: Any, sentence: str, direction: Direction, options: DecodeOptions
) -> CausalPass:
    """Translate ``sentence`` and take the full self-attention of prompt and translation."""
    prompt = prompt_tokens(tokenizer, sentence, direction)
    written = generate_translation(model, tokenizer, prompt, direction, options)
    weights = self_attention(model, prompt.ids + written[:-1])
    return CausalPass(prompt, written, weights)


def causal_map(
    tokenizer: Any, sentence: str, run: CausalPass, direction: Direction, num_beams: int = 1
) -> AttentionMap:
    """The heatmap's map: the translation's rows over the source's columns, every layer
    and head, in shares of each row's whole attention."""
    source_ids = [run.prompt.ids[i] for i in run.prompt.source]
    src_tokens = token_labels(tokenizer, source_ids)
    tgt_tokens = token_labels(tokenizer, run.written)
    rows, cols = run.rows, run.prompt.source
    decoded = tokenizer.decode(direction.shown(run.written), skip_special_tokens=True)
    return AttentionMap(
        sentence=clean_input(sentence),
        translation=direction.output_text(decoded),
        source_tokens=src_tokens,
        target_tokens=tgt_tokens,
        source_special=special_flags(tokenizer, source_ids, src_tokens, direction),
        target_special=special_flags(tokenizer, run.written, tgt_tokens, direction),
        weights=run.weights[:, :, rows.start : rows.stop, cols.start : cols.stop].astype(
            np.float32
        ),
        num_beams=num_beams,
        kind=CAUSAL_ATTENTION,
        axes=CAUSAL_AXES,
    )


def causal_attention_for(
    model: Any, tokenizer: Any, sentence: str, direction: Direction, options: DecodeOptions
) -> AttentionMap:
    """Translate ``sentence`` with a decoder-only model and return its map over the source."""
    run = causal_pass(model, tokenizer, sentence, direction, options)
    return causal_map(tokenizer, sentence, run, direction, options.num_beams)


# --- token labels ----------------------------------------------------------------------


def _byte_decoder(tokenizer: Any) -> dict[str, int] | None:
    """Byte-level BPE's character → byte table (Qwen's, GPT-2's), or None for other
    tokenizers, whose pieces already read ("▁tea", "<0x0A>")."""
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    if decoder is None or "ByteLevel" not in repr(decoder):
        return None
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return {char: byte for byte, char in bytes_to_unicode().items()}


def token_labels(tokenizer: Any, ids: list[int]) -> list[str]:
    """The tokens of ``ids`` as a heatmap labels them, in SentencePiece's style.

    A byte-level BPE token is stored as a byte alphabet ("Ġtea", "èĮ¶"): it is shown as
    its text, a leading space as "▁" so words merge as SentencePiece pieces do, a line
    break as "\\n", and a token holding part of a character as its bytes ("<0xE8>").
    """
    pieces = [str(p) for p in tokenizer.convert_ids_to_tokens(ids)]
    table = _byte_decoder(tokenizer)
    if table is None:
        return pieces
    special = set(tokenizer.all_special_ids)
    labels = []
    for token_id, piece in zip(ids, pieces, strict=True):
        if token_id in special or not piece or any(ch not in table for ch in piece):
            labels.append(piece)  # an added token (<|im_end|>, <think>) is its own text
            continue
        raw = bytes(table[ch] for ch in piece)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            labels.append("".join(f"<0x{b:02X}>" for b in raw))
            continue
        labels.append(text.replace(" ", "▁").replace("\n", "\\n").replace("\t", "\\t"))
    return labels
