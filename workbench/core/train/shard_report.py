"""What each rank of a ``--shard`` run holds, read from its live model once the Trainer
has sharded it, said in one line: the proof, on every run, that the weights are split
and not copied (a Trainer that fell back to DDP would hold every weight whole).

Imports transformers at the top: import it only where a run trains.
"""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback

from workbench.core.events import EventSink, Note
from workbench.core.train import distributed


def held_values(model: Any) -> tuple[int, int, int]:
    """(values this rank holds, values of the whole model, weights held whole here).

    A sharded weight is a DTensor: this rank holds its local part. Any other parameter
    is held whole by every rank.
    """
    from torch.distributed.tensor import DTensor

    held = total = whole = 0
    for parameter in model.parameters():
        total += parameter.numel()
        if isinstance(parameter, DTensor):
            held += parameter.to_local().numel()
        else:
            held += parameter.numel()
            whole += 1
    return held, total, whole


def shard_text(counts: list[tuple[int, int, int]]) -> str:
    """The line: each rank's part of the model's values, and any weight held whole."""
    total = counts[0][1]
    parts = ", ".join(f"rank {rank} {held:,}" for rank, (held, _, _) in enumerate(counts))
    whole = max(c[2] for c in counts)
    kept = "no weight held whole" if not whole else f"{whole} weights held whole on each rank"
    return f"each rank holds its shards of the {total:,} weight values: {parts} ({kept})"


class ShardReport(TrainerCallback):
    """Says, as training begins, what each rank holds (a collective: every rank runs it;
    rank 0 speaks)."""

    def __init__(self, emit: EventSink) -> None:
        self.emit = emit

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Count the live model's parts on every rank; rank 0 says them."""
        counts = distributed.gathered(held_values(kwargs["model"]))
        if distributed.is_main():
            self.emit(Note(shard_text(counts)))
