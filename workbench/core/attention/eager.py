"""Eager attention for one forward pass: the implementation that returns weights.

Models load with SDPA attention, which is fast but returns no weights. Every attention
view (the heatmap, the Lab's studies) switches the model to eager attention for its own
pass and restores the previous implementation afterwards, so training and plain
translation keep the fast path.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from workbench.errors import WorkbenchError


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


def check_weights(attentions: Any) -> None:
    """Refuse a forward pass that returned no attention weights, in one actionable line."""
    if attentions is None or any(a is None for a in attentions):
        raise WorkbenchError(
            "the model returned no attention weights (its attention implementation cannot "
            "be switched to eager); load it with attn_implementation='eager'"
        )
