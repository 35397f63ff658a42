"""The units a sharded run gathers whole, found on a model built on the meta device.

FSDP2 (``torch.distributed.fsdp.fully_shard``) shards each parameter over the ranks and
all-gathers one unit's parameters at a time: each transformer block is a unit of its own,
and ``fully_shard`` on the whole model makes everything no block holds (the embeddings,
the output layer, the final norm) one unit more, the root. What a rank holds gathered at
once is counted from the largest block and the root, so the memory plan of a ``--shard``
run needs their sizes before any weight is loaded
(:mod:`workbench.core.train.memory.sharded`).

A block is a module of a class :func:`~workbench.core.model.family.shard_blocks` names:
the classes the run itself wraps one unit each (the family's, else transformers'
``_no_split_modules``: ``LlamaDecoderLayer``, ``M2M100EncoderLayer``, ``T5Block``). A
model with none is one unit, the root, as the run shards it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.model.family import shard_blocks


@dataclass(frozen=True)
class ShardUnits:
    """The parameters of the units a sharded run gathers whole: the largest block and the
    root, each with the share of it that trains (the adapters alone under LoRA)."""

    block: int = 0
    block_trainable: int = 0
    root: int = 0
    root_trainable: int = 0


def transformer_blocks(model: Any) -> list[str]:
    """The names of the modules a sharded run wraps one unit each: those of a class
    :func:`~workbench.core.model.family.shard_blocks` names."""
    classes = set(shard_blocks(model))
    return [n for n, m in model.named_modules() if type(m).__name__ in classes]


def shard_units(model: Any, adapters: Sequence[tuple[str, int]] | None = None) -> ShardUnits:
    """The largest block's and the root's parameters in ``model``, and what of each
    trains: every parameter when fine-tuning fully; with ``adapters`` (each adapted
    layer's name and the parameters LoRA adds to it), only those. A tied table counts
    once."""
    blocks = transformer_blocks(model)

    def unit_of(name: str) -> str:
        holders = [b for b in blocks if name.startswith(f"{b}.")]
        return max(holders, key=len) if holders else ""  # "": the root

    own: Counter[str] = Counter()
    for name, parameter in model.named_parameters():
        own[unit_of(name)] += parameter.numel()
    added: Counter[str] = Counter()
    for name, count in adapters or ():
        added[unit_of(name)] += count
    largest = max(blocks, key=lambda b: own[b] + added[b], default="")
    lora = adapters is not None
    return ShardUnits(
        block=own[largest] + added[largest] if largest else 0,
        block_trainable=(added[largest] if lora else own[largest]) if largest else 0,
        root=own[""] + added[""],
        root_trainable=added[""] if lora else own[""],
    )
