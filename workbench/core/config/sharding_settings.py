"""The run settings of ``train --shard``: one model's weights, gradients and optimizer state
split over the processes of a ``torchrun`` or ``accelerate launch`` job (FSDP2), for a full
fine-tune that no single device holds.

- ``shard`` splits each transformer block (the family's, :mod:`workbench.core.model.family`)
  and the rest of the model over the ranks; each rank gathers one block's weights at a
  time for its forward and backward passes.
- ``shard_offload`` keeps the sharded weights and optimizer state in host memory between
  uses (FSDP2's CPU offload): less device memory, slower steps.
- ``gpus`` is the number of devices the memory plan divides by, for a plan made before
  the job is launched (``train --plan-only`` on a laptop); under a launcher the plan uses
  the launcher's world size, and a different ``gpus`` is refused.

Each is a :class:`~workbench.core.config.run_config.RunConfig` field, defined here so the
run's configuration reads as one list, and recorded in ``config.json``.
"""

from __future__ import annotations

from workbench.core.config.settings import setting

SHARD = setting(
    False,
    group="memory",
    help="shard weights, gradients and optimizer state over the launched processes "
    "(FSDP2; under torchrun or accelerate launch)",
)
SHARD_OFFLOAD = setting(
    False,
    group="memory",
    help="with --shard, keep the sharded weights and optimizer state in host memory "
    "between uses (less device memory, slower)",
)
GPUS = setting(
    0,
    group="memory",
    help="devices the memory plan divides a --shard run over (0 = the launcher's world "
    "size, 1 when not launched)",
)
