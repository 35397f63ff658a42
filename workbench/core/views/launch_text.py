"""The ``torchrun`` command that launches a ``workbench train`` run on a number of GPUs:
one node up to :data:`~workbench.core.records.memory.GPUS_PER_NODE`, else whole nodes of
that many, each node started with its rank and the first node's address. A plan that
names more GPUs than a run has quotes it, so the fix is a line to paste."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from workbench.core.records.memory import GPUS_PER_NODE


def launch_command(world: int, arguments: Sequence[str]) -> str:
    """``torchrun … -m workbench train --headless ARGUMENTS`` on ``world`` GPUs, in
    backquotes; past one node, with what each node's copy needs."""
    run = shlex.join(["-m", "workbench", "train", "--headless", *arguments])
    if world <= GPUS_PER_NODE:
        return f"`torchrun --nproc_per_node={world} {run}`"
    nodes = -(-world // GPUS_PER_NODE)
    return (
        f"`torchrun --nnodes={nodes} --nproc_per_node={GPUS_PER_NODE} --node_rank=RANK "
        f"--master_addr=ADDR --master_port=29500 {run}` on each of the {nodes} nodes (RANK "
        f"0 to {nodes - 1}; ADDR: node 0's address, as MASTER_ADDR)"
    )
