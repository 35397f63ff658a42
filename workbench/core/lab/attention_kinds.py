"""The three attentions of a Transformer translator, read off one sentence (the Lab's Q4/Q5).

A Marian model attends three ways: the encoder's self-attention (every source token looks
at every source token), the decoder's masked self-attention (an output position looks
only at the positions before it: the causal mask) and cross-attention (an output
position looks at the source). ``workbench attention`` shows only the last;
:func:`attention_kinds` translates the sentence exactly as it does (same ids, same
decoding, :func:`~workbench.core.attention.extract.translate_for_attention`) and takes all three
from one teacher-forced pass, so the cross-attention here is the heatmap's, number for
number. Each kind is a :class:`KindMap`, an
:class:`~workbench.core.attention.grid.AttentionGrid` like the heatmap's map, so layer/head
choice, word merging and the text renderer serve all three.

A decoder-only model has none of the three (one causal self-attention over prompt and
translation): its study is :mod:`workbench.core.lab.prompt_attention`.

The per-head table answers "what do different heads do": a head whose rows have low
entropy points at one token, a high one spreads its attention; for cross-attention,
``agreement`` is how often a head's strongest source token is the averaged view's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from workbench.core.attention.extract import (
    AttentionModel,
    cross_attention_map,
    forward_attentions,
    translate_for_attention,
)
from workbench.core.attention.grid import AttentionGrid
from workbench.core.records.typed import from_one_based, read_with
from workbench.errors import WorkbenchError

ENCODER = "encoder self-attention"
DECODER = "masked decoder self-attention"
CROSS = "cross-attention"
#: The kinds in the order data flows: encoder, decoder, then the bridge between them.
KINDS = (ENCODER, DECODER, CROSS)


#: Marian starts decoding from the pad id; "<pad>" as a column label reads as padding,
#: which it is not, so the first decoder input is shown under this name.
START_LABEL = "<start>"


def weights_array(value: object) -> np.ndarray:
    """A kind's weights as ``lab_attention.json`` holds them (nested lists, 4 decimals),
    as the array ``[layer, head, row, col]`` the study computed."""
    weights = np.asarray(value, dtype=np.float32)
    if weights.ndim != 4:
        raise ValueError("the weights are not [layer, head, row, col]")
    return weights


@dataclass
class KindMap(AttentionGrid):
    """One kind of attention of one sentence: ``weights[layer, head, row, col]``.

    ``axes`` says in words what rows and columns are, since it differs per kind.
    """

    kind: str
    axes: str
    row_tokens: list[str]
    col_tokens: list[str]
    row_special: list[bool]
    col_special: list[bool]
    weights: np.ndarray = field(metadata=read_with(weights_array))

    #: Written for the file to read alone (the weights' shape), derived again when read.
    WRITTEN_ONLY: ClassVar[tuple[str, ...]] = ("layers", "heads")

    @property
    def stack(self) -> str:
        """Encoder or decoder: whose layers these are, for error messages."""
        return "encoder" if self.kind == ENCODER else "decoder"

    def axis_tokens(self) -> tuple[list[str], list[str], list[bool], list[bool]]:
        """Row tokens, column tokens, and which of each are special."""
        return self.row_tokens, self.col_tokens, self.row_special, self.col_special

    def to_dict(self) -> dict[str, Any]:
        """Tokens and every layer/head matrix (4 decimals), for JSON."""
        return {
            "kind": self.kind,
            "axes": self.axes,
            "row_tokens": self.row_tokens,
            "col_tokens": self.col_tokens,
            "row_special": self.row_special,
            "col_special": self.col_special,
            "layers": self.num_layers,
            "heads": self.num_heads,
            "weights": np.round(self.weights.astype(np.float64), 4).tolist(),
        }


@dataclass(frozen=True)
class HeadStat:
    """How one head of one kind attends: entropy of its rows, and agreement (cross only)."""

    kind: str
    layer: int = field(metadata=read_with(from_one_based))  # 0-based here, 1-based in JSON
    head: int = field(metadata=read_with(from_one_based))  # 0-based here, 1-based in JSON
    entropy_bits: float  # mean over rows
    uniform_bits: float  # the same rows spread evenly over what they can see: the ceiling
    agreement: float | None  # cross-attention: share of rows whose argmax the mean view shares

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON, 1-based layer and head as the CLI prints them."""
        return {
            "kind": self.kind,
            "layer": self.layer + 1,
            "head": self.head + 1,
            "entropy_bits": round(self.entropy_bits, 4),
            "uniform_bits": round(self.uniform_bits, 4),
            "agreement": None if self.agreement is None else round(self.agreement, 4),
        }


@dataclass
class AttentionKinds:
    """The three attentions of one translated sentence, and the per-head table."""

    model: str
    sentence: str
    translation: str
    kinds: list[KindMap]  # one of each kind, put in the order of :data:`KINDS`
    num_beams: int = 1
    heads: list[HeadStat] = field(default_factory=list)

    def __post_init__(self) -> None:
        by_kind = {k.kind: k for k in self.kinds}
        missing = [kind for kind in KINDS if kind not in by_kind]
        if missing:
            raise ValueError(f"an AttentionKinds record has no {missing[0]!r} map")
        self.kinds = [by_kind[kind] for kind in KINDS]

    @property
    def encoder(self) -> KindMap:
        """The encoder's self-attention over the source."""
        return self.kinds[0]

    @property
    def decoder(self) -> KindMap:
        """The decoder's masked self-attention over what it wrote."""
        return self.kinds[1]

    @property
    def cross(self) -> KindMap:
        """Cross-attention: each output position over the source."""
        return self.kinds[2]

    def to_dict(self) -> dict[str, Any]:
        """Everything measured, for ``lab_attention.json``."""
        return {
            "model": self.model,
            "sentence": self.sentence,
            "translation": self.translation,
            "num_beams": self.num_beams,
            "kinds": [k.to_dict() for k in self.kinds],
            "heads": [h.to_dict() for h in self.heads],
        }


def attention_kinds(
    loaded: AttentionModel,
    sentence: str,
    num_beams: int | None = None,
    max_new_tokens: int | None = None,
) -> AttentionKinds:
    """Translate ``sentence`` as ``loaded.map`` does and return its three attentions."""
    if loaded.direction.causal:
        raise WorkbenchError(
            f"{loaded.name} is a decoder-only model: it has no encoder and no "
            "cross-attention, one causal self-attention over prompt and translation "
            "(the prompt study, workbench.core.lab.prompt_attention, measures it)"
        )
    options = loaded.options(num_beams, max_new_tokens)
    ids, sequence = translate_for_attention(
        loaded.model, loaded.tokenizer, sentence, loaded.direction, options
    )
    weights = forward_attentions(loaded.model, ids, sequence)
    amap = cross_attention_map(
        loaded.tokenizer, sentence, ids, sequence, weights.cross, options.num_beams
    )
    # Decoder position t reads sequence[t] and produces sequence[t + 1]: rows are named by
    # what they produce (as the cross-attention's rows), columns by what they read.
    inputs = [START_LABEL, *amap.target_tokens[:-1]]
    input_special = [True, *amap.target_special[:-1]]
    encoder = KindMap(
        ENCODER,
        "rows: source tokens · columns: source tokens",
        amap.source_tokens,
        amap.source_tokens,
        amap.source_special,
        amap.source_special,
        weights.encoder.astype(np.float32),
    )
    decoder = KindMap(
        DECODER,
        "rows: token being produced · columns: tokens already read",
        amap.target_tokens,
        inputs,
        amap.target_special,
        input_special,
        weights.decoder.astype(np.float32),
    )
    cross = KindMap(
        CROSS,
        "rows: token being produced · columns: source tokens",
        amap.target_tokens,
        amap.source_tokens,
        amap.target_special,
        amap.source_special,
        amap.weights,
    )
    result = AttentionKinds(
        loaded.name, amap.sentence, amap.translation, [encoder, decoder, cross], options.num_beams
    )
    result.heads = head_table(result)
    return result


def row_entropy_bits(matrix: np.ndarray) -> np.ndarray:
    """Shannon entropy of each row in bits, with 0 · log 0 = 0 (masked cells are exact 0s)."""
    p = matrix.astype(np.float64)
    logs = np.log2(p, out=np.zeros_like(p), where=p > 0)
    return np.maximum(-(p * logs).sum(axis=-1), 0.0)  # -0.0 and rounding below 0 read as 0


def head_table(result: AttentionKinds) -> list[HeadStat]:
    """One row per (kind, layer, head), over raw pieces with specials, as the heatmap shows."""
    cross_pick = result.cross.matrix("mean", "mean").argmax(axis=-1)
    rows: list[HeadStat] = []
    for kmap in result.kinds:
        rows_n, cols_n = kmap.weights.shape[2:]
        # A decoder row sees only itself and what came before, so its ceiling grows by row.
        visible = np.arange(1, rows_n + 1) if kmap.kind == DECODER else np.full(rows_n, cols_n)
        uniform = float(np.mean([math.log2(n) for n in visible]))
        for layer in range(kmap.num_layers):
            for head in range(kmap.num_heads):
                matrix = kmap.weights[layer, head]
                agreement = (
                    float((matrix.argmax(axis=-1) == cross_pick).mean())
                    if kmap.kind == CROSS
                    else None
                )
                rows.append(
                    HeadStat(
                        kmap.kind,
                        layer,
                        head,
                        float(row_entropy_bits(matrix).mean()),
                        uniform,
                        agreement,
                    )
                )
    return rows
