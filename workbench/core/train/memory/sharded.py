"""A ``--shard`` run's plan, one rank's: what FSDP2 leaves on each device, from the
one-device plan and the units the model is gathered in
(:mod:`workbench.core.model.blocks`).

Where each figure comes from (torch's ``torch.distributed.fsdp.fully_shard`` docs and its
FSDP notes, read for torch 2.13; accelerate 1.16's ``fsdp2_prepare_model``):

- **Sharded state.** ``fully_shard`` turns every parameter into a DTensor split on its
  first dimension over the ranks, and the optimizer steps on those shards: each rank
  keeps 1/N of the weights as they rest (fp32 where they train: accelerate upcasts
  trainable low-precision parameters to fp32 under mixed precision), of their gradients
  and of AdamW's two moments. Under LoRA the frozen base is sharded too. (A dimension
  that N does not divide is padded: under one row a parameter, not counted.)
- **Gathered units.** Before a unit's forward and backward, its parameters are
  all-gathered whole; after them, freed. A unit is one transformer block, or the root
  (what no block holds: embeddings, output layer, final norm). With a mixed-precision
  policy (``--bf16``/``--fp16``: ``param_dtype``) they are gathered in the compute dtype,
  otherwise in the weights' own; the gather *is* the half-precision copy, so autocast
  keeps none beside it. The next block's all-gather is issued while the current one
  computes (implicit forward prefetching; the backward pass prefetches the same way), so
  two blocks are whole at once; in the backward pass the block computed also holds its
  unsharded gradients (in the compute dtype) until they are reduce-scattered. The root
  is not resharded after the forward pass (``reshard_after_forward`` is False for the
  root): it stays whole from the first layer to the end of the backward pass, with its
  gradients where it trains. So a rank holds, on top of its shards: the root and its
  gradients, two of the largest block, and that block's gradients. Accelerate makes the
  input embeddings a unit of its own, freed after the forward pass: the count is an upper
  bound there.
- **Activations** are each rank's own: every rank runs the whole per-device batch. They
  are the one-device plan's (the fp32 figure where the weights train in fp32: FSDP2's
  bf16 gather may keep less, which no run here measured).
- **Offload** (``--shard-offload``, FSDP2's ``CPUOffloadPolicy``): the sharded weights,
  gradients and optimizer state live in host memory, copied to the device before each
  all-gather, and the optimizer steps on the CPU. The device holds the gathered units,
  the activations and the runtime.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable

from workbench.core.config.run_config import RunConfig
from workbench.core.model.blocks import ShardUnits
from workbench.core.records.memory import GPUS_PER_NODE, MOST_GPUS, MemoryPlan, Sharding
from workbench.core.train import distributed
from workbench.errors import WorkbenchError


def plan_world_size(config: RunConfig) -> int:
    """The ranks the plan divides a ``--shard`` run over: ``--gpus``, else the launcher's
    world size (``WORLD_SIZE``), else 1. Under a launcher, a ``--gpus`` that is not its
    world size is refused in one line."""
    world = distributed.world_size()
    if "WORLD_SIZE" in os.environ and config.gpus and config.gpus != world:
        raise WorkbenchError(
            f"--gpus {config.gpus} is not this launch's world size ({world} processes, "
            f"WORLD_SIZE); drop --gpus under a launcher, or launch {config.gpus} processes "
            f"(torchrun --nproc_per_node={config.gpus} …)"
        )
    return config.gpus or world


def shard_plan(
    plan: MemoryPlan, units: ShardUnits, world: int, offload: bool, training: str
) -> MemoryPlan:
    """``plan`` (a one-device plan) as one rank of ``world`` holds it under FSDP2, its
    units gathered in ``training``'s dtype where that is mixed (``bf16``, ``fp16``);
    ``offload``: the shards in host memory."""
    resting = plan.weights - plan.copies
    mixed = training != "fp32"
    value = 2.0 if mixed else resting / max(1, plan.parameters)  # bytes a gathered weight
    dtype = training if mixed else ("fp32" if value == 4 else "the weights' own dtypes")
    whole = units.root + units.root_trainable + 2 * units.block + units.block_trainable
    return dataclasses.replace(
        plan,
        weights=resting / world,
        copies=0.0,
        gradients=plan.gradients / world,
        optimizer=plan.optimizer / world,
        sharding=Sharding(world, value * whole, units.root, units.block, dtype, offload),
    )


def world_sizes() -> list[int]:
    """The launches the plan tries, smallest first: 2 to a node's GPUs on one node, then
    whole nodes, up to :data:`MOST_GPUS`."""
    nodes = range(2 * GPUS_PER_NODE, MOST_GPUS + 1, GPUS_PER_NODE)
    return [*range(2, GPUS_PER_NODE + 1), *nodes]


def smallest_world(rank_plan: Callable[[int], MemoryPlan]) -> int | None:
    """The fewest ranks of :func:`world_sizes` whose rank's plan (``rank_plan(ranks)``)
    fits (a rank's bytes only shrink as ranks are added), or None when even the most do
    not."""
    sizes = world_sizes()
    if not rank_plan(sizes[-1]).fits:
        return None
    low, high = 0, len(sizes) - 1  # sizes[high] fits
    while low < high:
        middle = (low + high) // 2
        if rank_plan(sizes[middle]).fits:
            high = middle
        else:
            low = middle + 1
    return sizes[high]
