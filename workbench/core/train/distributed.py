"""Several processes, one run: what rank 0 does alone and where the ranks must meet.

``torchrun --nproc_per_node=N -m workbench train --headless`` (or ``accelerate launch``)
starts N copies of the same command. The Hugging Face Trainer shards the batches and
averages the gradients; everything around it is ours to coordinate: one run folder for all
ranks (rank 0 names it and tells the others), one set of outputs and printed lines (rank 0),
the before/after translations done once over the whole validation set (rank 0), and a stop
request that reaches every rank at the same step (else one rank would wait forever in the
next gradient exchange).

The process group is created here, on the first collective call, with the run's
``ddp_timeout`` (:func:`configure`): while rank 0 alone fills the sample cache and
decodes the "before" sets, the other ranks wait at a barrier, and NCCL's 10-minute
default would kill the job. The Trainer's own ``ddp_timeout`` comes too late to help:
it cannot change a process group that already exists.

With one process every function here is a no-op that imports nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any


def world_size() -> int:
    """Processes in this run, from the launcher's environment (1 when not launched)."""
    try:
        return max(1, int(os.environ.get("WORLD_SIZE", "1")))
    except ValueError:
        return 1


def rank() -> int:
    """This process's global rank (0 when not launched)."""
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0


def is_main() -> bool:
    """True in the process that prints, writes and saves."""
    return rank() == 0


def is_distributed() -> bool:
    """Whether this run is several processes (torchrun), whose stops and saves must agree."""
    return world_size() > 1


#: Seconds a collective call waits for the other ranks (set by :func:`configure`).
_timeout_seconds: int | None = None


def configure(timeout_seconds: int) -> None:
    """Set the timeout the process group will be created with (call before any collective)."""
    global _timeout_seconds
    _timeout_seconds = timeout_seconds


def _state() -> Any:
    # accelerate's shared state starts the process group (gloo on CPU, nccl on GPUs) once;
    # the Trainer created later joins the same group.
    from datetime import timedelta

    from accelerate import PartialState

    if _timeout_seconds is None:
        return PartialState()
    return PartialState(timeout=timedelta(seconds=_timeout_seconds))


def process_group_timeout() -> float | None:
    """Seconds the live process group waits in a collective, read back from torch.

    None with one process, or where this torch version does not expose it (the value is
    read from the backend's options, not a public API).
    """
    if not is_distributed():
        return None
    import torch
    import torch.distributed as dist

    state = _state()
    try:
        group = dist.distributed_c10d._get_default_group()
        backend = group._get_backend(torch.device(state.device))
        return float(backend.options._timeout.total_seconds())
    except (AttributeError, RuntimeError, ValueError):
        return None


def barrier() -> None:
    """Wait until every rank gets here."""
    if is_distributed():
        _state().wait_for_everyone()


def from_main(value: Any) -> Any:
    """Rank 0's ``value`` on every rank (e.g. the run folder it created)."""
    if not is_distributed():
        return value
    import torch.distributed as dist

    _state()
    box = [value if is_main() else None]
    dist.broadcast_object_list(box, src=0)
    return box[0]


@contextlib.contextmanager
def main_first() -> Iterator[None]:
    """Rank 0 runs the block first (e.g. writes a cache or a tokenizer); then the others."""
    if not is_distributed():
        yield
        return
    with _state().main_process_first():
        yield


def any_rank(flag: bool, device: Any = None) -> bool:
    """True on every rank when ``flag`` is true on at least one (a collective call)."""
    if not is_distributed():
        return flag
    import torch
    import torch.distributed as dist

    value = torch.tensor([1 if flag else 0], device=device)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return bool(value.item())


def gathered(value: Any) -> list[Any]:
    """Every rank's ``value``, in rank order, on every rank (a collective call)."""
    if not is_distributed():
        return [value]
    import torch.distributed as dist

    _state()
    values: list[Any] = [None] * world_size()
    dist.all_gather_object(values, value)
    return values
