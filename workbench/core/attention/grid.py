"""Cross-attention maps: which source tokens the decoder looked at for each output token.

The heatmap is the assignment's window into a translation model, shared by
``workbench attention`` and the TUI: :func:`attention_for` translates one sentence and
returns an :class:`AttentionMap` holding every (layer, head) matrix; its
:meth:`AttentionMap.view` picks the layer/head, merges SentencePiece pieces into words
and hides special tokens. Rendering lives elsewhere (``workbench.core.attention.heatmap``), so this
module needs only numpy and torch.

Marian loads with SDPA attention, which is fast but returns no weights. Extraction
switches the model to eager attention for its own duration and restores the previous
implementation afterwards, so training and plain translation keep the fast path.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from workbench.core.decoding import DecodeOptions, clean_input, length_bound, with_label
from workbench.core.views.wide import has_cjk
from workbench.errors import WorkbenchError

#: Widest source the view accepts. Past this a heatmap is dozens of pages of columns that
#: nobody reads, and Marian's position table (512 rows) is not far off.
MAX_SOURCE_TOKENS = 200

#: Default view: the mean over every decoder layer and head. Chosen by measurement
#: (benchmarks/attention_views.py): on the trained demo model its strongest source word was
#: a target word's lexicon translation about as often as the best single layer's, and far
#: more often than single heads; unlike "the last layer" it also keeps the early decoder
#: layers, which align best on the 6-layer opus-mt models.
DEFAULT_LAYER: int | Literal["mean"] = "mean"
DEFAULT_HEAD: int | Literal["mean"] = "mean"

Selector = int | Literal["mean"]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


class AttentionView(NamedTuple):
    """One 2-D slice ready to draw: rows are target tokens, columns source tokens."""

    row_labels: list[str]
    col_labels: list[str]
    matrix: np.ndarray
    title: str  # what was chosen, e.g. "layer 1/2, mean of 4 heads · words"


class AttentionGrid:
    """Layer/head choice and the drawable view of any stack of attention matrices.

    Cross-attention (:class:`AttentionMap`) and the Lab's encoder and decoder
    self-attention (``workbench.core.lab.attention_kinds``) are all
    ``weights[layer, head, row, col]`` with tokens along both axes, so one piece of code
    picks, averages, merges pieces into words and hides specials for all of them.
    Subclasses provide the weights and :meth:`axis_tokens`.
    """

    def axis_tokens(self) -> tuple[list[str], list[str], list[bool], list[bool]]:
        """Row tokens, column tokens, and which of each are special."""
        raise NotImplementedError

    weights: np.ndarray
    #: Which stack the layers belong to, for error messages ("this model has 6 decoder layers").
    stack: str = "decoder"

    @property
    def num_layers(self) -> int:
        """Layers in the stack these weights come from."""
        return int(self.weights.shape[0])

    @property
    def default_layer(self) -> int:
        """The layer shown when none is chosen, as a 0-based index (see DEFAULT_LAYER)."""
        return 0 if DEFAULT_LAYER == "mean" else DEFAULT_LAYER % self.num_layers

    @property
    def num_heads(self) -> int:
        """Attention heads per layer."""
        return int(self.weights.shape[1])

    def _check(self, name: str, value: Selector, count: int) -> None:
        if value == "mean":
            return
        if isinstance(value, bool) or not isinstance(value, int) or not -count <= value < count:
            plural = "" if count == 1 else "s"
            raise WorkbenchError(
                f"{name} {value!r} does not exist: this model has {count} {self.stack} "
                f"{name}{plural} (0..{count - 1}, or 'mean')"
            )

    def matrix(self, layer: Selector | None = None, head: Selector | None = None) -> np.ndarray:
        """The [row, col] matrix of one layer/head, or a mean over them.

        ``None`` means the default view (DEFAULT_LAYER, DEFAULT_HEAD); indices are 0-based.
        """
        layer = DEFAULT_LAYER if layer is None else layer
        head = DEFAULT_HEAD if head is None else head
        self._check("layer", layer, self.num_layers)
        self._check("head", head, self.num_heads)
        picked = self.weights.mean(axis=0) if layer == "mean" else self.weights[layer]
        return picked.mean(axis=0) if head == "mean" else picked[head]

    def view(
        self,
        layer: Selector | None = None,
        head: Selector | None = None,
        words: bool = False,
        hide_special: bool = False,
    ) -> AttentionView:
        """Labels and matrix for one choice of layer/head, pieces or words, specials or not.

        Merging pieces sums the columns of a word (the attention the word got in total)
        and averages the rows of a word (each row stays a distribution), so rows still
        sum to 1. Hiding specials drops their rows and columns and renormalises each row
        over the tokens shown, because a trained model parks much of its attention on
        ``</s>`` and the rest would look washed out.
        """
        matrix = self.matrix(layer, head).astype(np.float64)
        row_tokens, col_tokens, row_flags, col_flags = self.axis_tokens()
        col_groups = word_groups(col_tokens, col_flags, words)
        row_groups = word_groups(row_tokens, row_flags, words)
        matrix = np.stack([matrix[:, g].sum(axis=1) for g in col_groups], axis=1)
        matrix = np.stack([matrix[g].mean(axis=0) for g in row_groups], axis=0)
        col_special = [col_flags[g[0]] for g in col_groups]
        row_special = [row_flags[g[0]] for g in row_groups]
        title = f"{self.describe(layer, head)} · {'words' if words else 'pieces'}"
        col_labels = [group_label(col_tokens, g) for g in col_groups]
        row_labels = [group_label(row_tokens, g) for g in row_groups]
        if hide_special:
            keep_cols = [i for i, s in enumerate(col_special) if not s]
            keep_rows = [i for i, s in enumerate(row_special) if not s]
            if not keep_cols or not keep_rows:
                raise WorkbenchError("nothing left to show once special tokens are hidden; "
                                     "show them, or translate a longer sentence")
            matrix = matrix[np.ix_(keep_rows, keep_cols)]
            sums = matrix.sum(axis=1, keepdims=True)
            matrix = np.divide(matrix, sums, out=np.zeros_like(matrix), where=sums > 0)
            col_labels = [col_labels[i] for i in keep_cols]
            row_labels = [row_labels[i] for i in keep_rows]
            title += " · specials hidden"
        return AttentionView(row_labels, col_labels, matrix, title)

    def describe(self, layer: Selector | None = None, head: Selector | None = None) -> str:
        """Words for a view choice, 1-based as the CLI counts ("layer 1/2, mean of 4 heads")."""
        layer = DEFAULT_LAYER if layer is None else layer
        head = DEFAULT_HEAD if head is None else head
        layer_text = (f"mean of {_plural(self.num_layers, 'layer')}" if layer == "mean"
                      else f"layer {layer % self.num_layers + 1}/{self.num_layers}")
        head_text = (f"mean of {_plural(self.num_heads, 'head')}" if head == "mean"
                     else f"head {head % self.num_heads + 1}/{self.num_heads}")
        return f"{layer_text}, {head_text}"


@dataclass
class AttentionMap(AttentionGrid):
    """Every cross-attention matrix of one translated sentence.

    ``weights[layer, head, t, s]`` is how much the decoder, when producing target token
    ``t``, attended to source token ``s``; each row sums to 1. Tokens are raw
    SentencePiece pieces ("▁cat"); the ``*_special`` lists flag the language label,
    ``</s>`` and padding.
    """

    sentence: str
    translation: str
    source_tokens: list[str]
    target_tokens: list[str]
    source_special: list[bool]
    target_special: list[bool]
    weights: np.ndarray
    num_beams: int = 1

    def axis_tokens(self) -> tuple[list[str], list[str], list[bool], list[bool]]:
        """Rows are what the decoder produced, columns what it read."""
        return self.target_tokens, self.source_tokens, self.target_special, self.source_special


# --- pieces and words ------------------------------------------------------------------

def _is_punct(text: str) -> bool:
    return bool(text) and all(unicodedata.category(ch).startswith("P") for ch in text)


def word_groups(tokens: list[str], special: list[bool], words: bool) -> list[list[int]]:
    """Indices of the pieces that make up each displayed unit.

    A SentencePiece word starts at a piece beginning with "▁". Chinese has no spaces,
    so a piece with CJK characters is a unit of its own (spm pieces there are already
    word-sized), and punctuation stands alone so "mat." reads as "mat" and ".".
    """
    if not words:
        return [[i] for i in range(len(tokens))]
    groups: list[list[int]] = []
    for i, token in enumerate(tokens):
        bare = token.lstrip("▁")
        starts = (
            not groups
            or special[i]
            or special[i - 1]
            or token.startswith("▁")
            or _is_punct(bare)
            or has_cjk(bare)
            or has_cjk(tokens[i - 1])
        )
        if starts:
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def group_label(tokens: list[str], group: list[int]) -> str:
    """Display text of a unit: pieces joined, "▁" dropped; a lone continuation piece gets "·"."""
    text = "".join(tokens[i] for i in group)
    bare = text.replace("▁", "")
    if not bare:
        return text  # a lone "▁" piece: keep it visible
    if len(group) == 1 and group[0] > 0 and not text.startswith("▁") and not (
        _is_punct(bare) or has_cjk(bare) or _is_label(text) or text in ("</s>", "<pad>", "<unk>")
    ):
        return "·" + bare
    return bare


def _is_label(token: str) -> bool:
    return token.startswith(">>") and token.endswith("<<")


# --- extraction --------------------------------------------------------------------------

@contextmanager
def eager_attention(model: Any) -> Iterator[None]:
    """Run the block with eager attention (which returns weights), then restore.

    Only this block pays for eager attention; the model goes back to SDPA (or whatever
    it was loaded with) even when the block raises.
    """
    previous = getattr(model.config, "_attn_implementation", None)
    if previous == "eager":
        yield
        return
    model.set_attn_implementation("eager")
    try:
        yield
    finally:
        if previous is not None:
            model.set_attn_implementation(previous)


def source_ids(tokenizer: Any, sentence: str, target_label: str | None = None) -> list[int]:
    """Token ids of a sentence as the translator feeds it (label first, then </s>)."""
    cleaned = clean_input(sentence)
    if not cleaned:
        raise WorkbenchError('empty sentence: give the text to look at, e.g. '
                             'workbench attention "I like to drink tea."')
    ids = list(tokenizer(with_label(cleaned, target_label))["input_ids"])
    if len(ids) > MAX_SOURCE_TOKENS:
        words = len(cleaned.split())
        raise WorkbenchError(
            f"the sentence is {len(ids):,} tokens long ({words:,} words); the attention view "
            f"takes at most {MAX_SOURCE_TOKENS} (a wider heatmap cannot be read): pass one "
            "sentence at a time"
        )
    return ids


def _check_weights(attentions: Any) -> None:
    if attentions is None or any(a is None for a in attentions):
        raise WorkbenchError(
            "the model returned no attention weights (its attention implementation cannot "
            "be switched to eager); load it with attn_implementation='eager'"
        )


class ForwardAttentions(NamedTuple):
    """The three attentions of one teacher-forced pass, each ``[layers, heads, rows, cols]``."""

    encoder: np.ndarray  # source x source
    decoder: np.ndarray  # decoder input x decoder input, zero above the diagonal (causal)
    cross: np.ndarray  # decoder input x source


def forward_attentions(model: Any, input_ids: list[int], sequence: list[int]) -> ForwardAttentions:
    """Encoder self-, decoder self- and cross-attention in one teacher-forced forward pass.

    ``sequence`` starts with the decoder start token, as ``generate`` returns it; decoder
    row ``t`` is the position that predicts ``sequence[t + 1]``, so the decoder's rows
    and columns are ``len(sequence) - 1`` long.
    """
    import torch

    device = next(model.parameters()).device
    src = torch.tensor([input_ids], device=device)
    dec = torch.tensor([sequence[:-1]], device=device)
    with torch.inference_mode(), eager_attention(model):
        out = model(input_ids=src, attention_mask=torch.ones_like(src),
                    decoder_input_ids=dec, output_attentions=True, use_cache=False)
    for attentions in (out.encoder_attentions, out.decoder_attentions, out.cross_attentions):
        _check_weights(attentions)

    def stacked(attentions: Any) -> np.ndarray:
        return torch.stack([a[0] for a in attentions]).float().cpu().numpy()

    return ForwardAttentions(stacked(out.encoder_attentions), stacked(out.decoder_attentions),
                             stacked(out.cross_attentions))


def forward_attention(model: Any, input_ids: list[int], sequence: list[int]) -> np.ndarray:
    """Cross-attention for a full output sequence in one teacher-forced forward pass.

    Row ``t`` of the result is the attention while predicting ``sequence[t + 1]``.
    Returns ``[layers, heads, len(sequence) - 1, len(input_ids)]``.
    """
    return forward_attentions(model, input_ids, sequence).cross


def _generate_kwargs(input_ids: list[int], options: DecodeOptions) -> dict[str, Any]:
    """generate()'s decoding arguments, exactly as the Translator passes them."""
    return {"num_beams": options.num_beams,
            "max_new_tokens": length_bound(len(input_ids), options.max_new_tokens),
            "no_repeat_ngram_size": options.no_repeat_ngram_size}


def translate_ids(model: Any, input_ids: list[int], options: DecodeOptions) -> list[int]:
    """The output ids (start token first) on the model's fast attention path."""
    import torch

    src = torch.tensor([input_ids], device=next(model.parameters()).device)
    with torch.inference_mode():
        out = model.generate(input_ids=src, attention_mask=torch.ones_like(src),
                             **_generate_kwargs(input_ids, options))
    return [int(t) for t in out[0]]


def generate_with_attention(
    model: Any, input_ids: list[int], options: DecodeOptions
) -> tuple[list[int], np.ndarray]:
    """Translate and collect the cross-attention ``generate`` saw at each step.

    With beams, ``cross_attentions[step]`` holds every running beam; ``beam_indices``
    names the beam each chosen token came from, and following it gives the chosen
    sequence's own attention. Returns the sequence (with the start token) and
    ``[layers, heads, steps, source]``.
    """
    import torch

    device = next(model.parameters()).device
    src = torch.tensor([input_ids], device=device)
    with torch.inference_mode(), eager_attention(model):
        out = model.generate(
            input_ids=src, attention_mask=torch.ones_like(src),
            **_generate_kwargs(input_ids, options), output_attentions=True,
            return_dict_in_generate=True, output_scores=options.num_beams > 1,
        )
    _check_weights(out.cross_attentions)
    sequence = [int(t) for t in out.sequences[0]]
    steps = len(sequence) - 1
    beams = ([int(b) for b in out.beam_indices[0][:steps]] if options.num_beams > 1
             else [0] * steps)
    per_step = [
        torch.stack([layer[beams[t], :, -1, :] for layer in out.cross_attentions[t]])
        for t in range(steps)
    ]  # each [layers, heads, source]
    weights = torch.stack(per_step, dim=2).float().cpu().numpy()
    return sequence, weights


def _strip_padding(sequence: list[int], pad_id: int | None, eos_id: int | None) -> list[int]:
    """Drop anything after the first </s> (beam outputs can be padded)."""
    if eos_id is not None and eos_id in sequence[1:]:
        sequence = sequence[: sequence.index(eos_id, 1) + 1]
    while len(sequence) > 2 and pad_id is not None and sequence[-1] == pad_id:
        sequence = sequence[:-1]
    return sequence


def attention_for(
    model: Any,
    tokenizer: Any,
    sentence: str,
    target_label: str | None = None,
    options: DecodeOptions | None = None,
    method: Literal["forward", "generate"] = "forward",
) -> AttentionMap:
    """Translate ``sentence`` and return the cross-attention of the chosen output.

    ``options`` default to the model's own (:meth:`DecodeOptions.of_model`), as the
    Translator's do, so the heatmap is drawn for the translation the console prints.
    ``method="forward"`` (default) re-runs one forward pass over the final sequence,
    which is the same for greedy and beam search and costs one pass; ``"generate"``
    keeps the weights generate saw step by step (following the chosen beam). Both give
    the same numbers; the tests hold them to it.
    """
    options = options or DecodeOptions.of_model(model.generation_config)
    if method == "forward":
        ids, trimmed = translate_for_attention(model, tokenizer, sentence, target_label,
                                               options)
        weights = forward_attention(model, ids, trimmed)
    else:
        ids = source_ids(tokenizer, sentence, target_label)
        model.eval()
        sequence, weights = generate_with_attention(model, ids, options)
        trimmed = _strip_padding(sequence, tokenizer.pad_token_id, tokenizer.eos_token_id)
        weights = weights[:, :, : len(trimmed) - 1]
    return cross_attention_map(tokenizer, sentence, ids, trimmed, weights, options.num_beams)


def translate_for_attention(
    model: Any, tokenizer: Any, sentence: str, target_label: str | None, options: DecodeOptions
) -> tuple[list[int], list[int]]:
    """The source ids and the output (start token first, padding dropped) a map is drawn for.

    Shared by the heatmap and the Lab's three attentions, so both look at the same
    translation of the same ids.
    """
    ids = source_ids(tokenizer, sentence, target_label)
    model.eval()
    sequence = translate_ids(model, ids, options)
    return ids, _strip_padding(sequence, tokenizer.pad_token_id, tokenizer.eos_token_id)


def special_flags(tokenizer: Any, ids: list[int], tokens: list[str]) -> list[bool]:
    """Which tokens are special (label, </s>, padding); <unk> is not: it stands for a word."""
    special_ids = set(tokenizer.all_special_ids)
    unk = tokenizer.unk_token_id
    return [(i in special_ids and i != unk) or _is_label(t)
            for i, t in zip(ids, tokens, strict=True)]


def cross_attention_map(tokenizer: Any, sentence: str, ids: list[int], sequence: list[int],
                        weights: np.ndarray, num_beams: int = 1) -> AttentionMap:
    """The :class:`AttentionMap` of ``weights`` for source ``ids`` and output ``sequence``."""
    src_tokens = list(tokenizer.convert_ids_to_tokens(ids))
    tgt_ids = sequence[1:]
    tgt_tokens = list(tokenizer.convert_ids_to_tokens(tgt_ids))
    return AttentionMap(
        sentence=clean_input(sentence),
        translation=tokenizer.decode(tgt_ids, skip_special_tokens=True).strip(),
        source_tokens=src_tokens,
        target_tokens=tgt_tokens,
        source_special=special_flags(tokenizer, ids, src_tokens),
        target_special=special_flags(tokenizer, tgt_ids, tgt_tokens),
        weights=weights.astype(np.float32),
        num_beams=num_beams,
    )


@dataclass
class AttentionModel:
    """A model loaded for attention views, with the label it translates with."""

    name: str
    model: Any
    tokenizer: Any
    target_label: str | None

    def map(self, sentence: str, num_beams: int | None = None,
            max_new_tokens: int | None = None) -> AttentionMap:
        """The attention of ``sentence``, decoded with the model's own settings unless
        the user overrides beams or length."""
        return attention_for(self.model, self.tokenizer, sentence, self.target_label,
                             self.options(num_beams, max_new_tokens))

    def options(self, num_beams: int | None = None,
                max_new_tokens: int | None = None) -> DecodeOptions:
        """The model's own decoding settings, with the user's beams or length if given."""
        return DecodeOptions.of_model(self.model.generation_config).overridden(
            num_beams, max_new_tokens)


def load_attention_model(model_dir: str) -> AttentionModel:
    """Load a saved model or Hub id with its label, checked against its tokenizer.

    ``workbench attention``, the TUI's Attention pane and the run report all start here,
    so they load, label and decode a model the same way.
    """
    from workbench.core.model.load import check_target_label, load_model_and_tokenizer
    from workbench.core.translate.translator import read_settings

    model, tokenizer = load_model_and_tokenizer(model_dir)
    label = read_settings(model_dir).get("target_label")
    check_target_label(tokenizer, label)
    return AttentionModel(model_dir, model, tokenizer, label)
