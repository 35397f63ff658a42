"""Cross-attention maps: which source tokens the decoder looked at for each output token.

The heatmap is the assignment's window into a translation model, shared by
``workbench attention`` and the TUI: :func:`attention_for` translates one sentence and
returns an :class:`AttentionMap` holding every (layer, head) matrix; its
:meth:`AttentionMap.view` picks the layer/head, merges SentencePiece pieces into words
and hides special tokens. Taking the weights from a model is ``extract`` (torch);
rendering is ``heatmap``; this module needs only numpy.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from workbench.core.languages import Direction
from workbench.core.model.family import FAMILIES
from workbench.core.views.wide import has_cjk
from workbench.errors import WorkbenchError

#: Widest source the view accepts. Past this a heatmap is dozens of pages of columns that
#: nobody reads, and Marian's position table (512 rows) is not far off.
MAX_SOURCE_TOKENS = 200


def check_source_tokens(tokens: int, sentence: str) -> None:
    """One line when a sentence has more source tokens than a heatmap can show."""
    if tokens > MAX_SOURCE_TOKENS:
        raise WorkbenchError(
            f"the sentence is {tokens:,} tokens long ({len(sentence.split()):,} words); the "
            f"attention view takes at most {MAX_SOURCE_TOKENS} (a wider heatmap cannot be "
            "read): pass one sentence at a time"
        )


#: Default view: the mean over every decoder layer and head. Chosen by measurement
#: (benchmarks/attention_views.py): on the trained demo model its strongest source word was
#: a target word's lexicon translation about as often as the best single layer's, and far
#: more often than single heads; unlike "the last layer" it also keeps the early decoder
#: layers, which align best on the 6-layer opus-mt models.
DEFAULT_LAYER: int | Literal["mean"] = "mean"
DEFAULT_HEAD: int | Literal["mean"] = "mean"

#: What a seq2seq map shows, as its title says it.
CROSS_ATTENTION = "cross-attention"
#: What the bracket and the axes mean (the heatmap legend's last two lines), for
#: cross-attention; other maps name their own.
CROSS_AXES = ("[ ] strongest source token for each row", "rows: translation, columns: source")

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

    @property
    def stack(self) -> str:
        """Which stack the layers belong to, for error messages ("this model has 6 decoder
        layers"); cross-attention's is the decoder's."""
        return "decoder"

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
                raise WorkbenchError(
                    "nothing left to show once special tokens are hidden; "
                    "show them, or translate a longer sentence"
                )
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
        layer_text = (
            f"mean of {_plural(self.num_layers, 'layer')}"
            if layer == "mean"
            else f"layer {layer % self.num_layers + 1}/{self.num_layers}"
        )
        head_text = (
            f"mean of {_plural(self.num_heads, 'head')}"
            if head == "mean"
            else f"head {head % self.num_heads + 1}/{self.num_heads}"
        )
        return f"{layer_text}, {head_text}"


@dataclass
class AttentionMap(AttentionGrid):
    """Every cross-attention matrix of one translated sentence.

    ``weights[layer, head, t, s]`` is how much the decoder, when producing target token
    ``t``, attended to source token ``s``; each row sums to 1. Tokens are raw
    SentencePiece pieces ("▁cat"); the ``*_special`` lists flag the language label,
    ``</s>`` and padding.

    A decoder-only model has no cross-attention: its map (``kind``, see
    :mod:`workbench.core.attention.causal`) holds the translation's self-attention over
    the source's tokens inside the prompt, a slice of rows that each sum to 1 over the
    whole prompt and translation, so a row's cells sum to the share the source got.
    """

    sentence: str
    translation: str
    source_tokens: list[str]
    target_tokens: list[str]
    source_special: list[bool]
    target_special: list[bool]
    weights: np.ndarray
    num_beams: int = 1
    kind: str = CROSS_ATTENTION  # what the rows read, as every title says it
    axes: tuple[str, str] = CROSS_AXES  # the heatmap legend's bracket and axes lines

    def axis_tokens(self) -> tuple[list[str], list[str], list[bool], list[bool]]:
        """Rows are what the decoder produced, columns what it read."""
        return self.target_tokens, self.source_tokens, self.target_special, self.source_special

    def heading(self, view: AttentionView) -> str:
        """The title of a drawn view: the kind of attention, then the layer/head choice."""
        return f"{self.kind} · {view.title}"


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
    if (
        len(group) == 1
        and group[0] > 0
        and not text.startswith("▁")
        and not (
            _is_punct(bare) or has_cjk(bare) or is_label(text) or text in ("</s>", "<pad>", "<unk>")
        )
    ):
        return "·" + bare
    return bare


#: Language codes as tokens, in every family's shape (Marian ``>>cmn_Hans<<``, NLLB
#: ``zho_Hans``, M2M100 ``__zh__``, mBART-50 ``zh_CN``), as the family seam defines them.
_CODE_TOKEN = re.compile(
    "|".join(f"(?:{f.code_pattern})" for f in FAMILIES if f.code_pattern is not None)
)


def is_label(token: str) -> bool:
    """True for a target-language label or a language code of any family."""
    return bool(_CODE_TOKEN.match(token))


def special_flags(
    tokenizer: Any, ids: list[int], tokens: list[str], direction: Direction | None = None
) -> list[bool]:
    """Which tokens are special (label or language code, </s>, padding); <unk> is not: it
    stands for a word."""
    special_ids = set(tokenizer.all_special_ids) | set((direction or Direction()).code_ids)
    unk = tokenizer.unk_token_id
    return [
        (i in special_ids and i != unk) or is_label(t) for i, t in zip(ids, tokens, strict=True)
    ]
