"""How much one run measures: the quick CPU mode and the full GPU mode.

A mode is chosen by a flag (``--quick``) and adjusted by two (``--reps``, ``--threads``);
everything else about a run's size is fixed here, so that two runs of the same mode
measure the same batches.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    """The sizes of one run: its epoch, the timed batches, repetitions and threads."""

    name: str  # "quick" or "full", as the report names it
    # Training: the workbench's own sampler orders a full epoch of `epoch` pairs (the
    # assignment's 50,000 x 9/10); `train_batches` of its batches, one typical batch per
    # equal share of them by size, are timed (plan_training).
    epoch: int
    train_batches: int
    # Evaluation: `validation_batches` length strata of a `validation_pool`-sentence set
    # (length_strata), or all `validation_pool` sentences when None.
    validation_pool: int
    validation_batches: int | None
    reps: int  # repetitions per arm, each phase in a fresh process
    check_batch: int  # the same-loss check: batch size and steps
    check_steps: int
    threads: int  # torch threads per process; 0 keeps torch's default


MODES = {
    # Quick: a reference step takes ~23 s on one CPU core and its 4-beam evaluation ~30 s
    # per batch of 16, hence 2 training batches (one typical of each half of the epoch's
    # batch sizes) and 2 evaluation batches per repetition.
    "quick": Mode(
        "quick",
        epoch=45_000,
        train_batches=2,
        validation_pool=5000,
        validation_batches=2,
        reps=2,
        check_batch=2,
        check_steps=3,
        threads=1,
    ),
    "full": Mode(
        "full",
        epoch=45_000,
        train_batches=100,
        validation_pool=512,
        validation_batches=None,
        reps=3,
        check_batch=16,
        check_steps=20,
        threads=0,
    ),
}
