"""How much one run measures: the quick CPU mode, the full GPU mode, and the smoke run.

A mode is chosen by a flag (``--quick``, ``--smoke``) and adjusted by two (``--reps``,
``--threads``); everything else about a run's size is fixed here, so that two runs of the
same mode measure the same batches.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    # Parts of opus-mt's shape replaced (model.OPUS_SHAPE); only the smoke run shrinks it.
    shape: Mapping[str, int] | None = None
    # Each phase in a fresh process. The smoke run runs all but the matmul in its own
    # process: a fresh interpreter spends ~5 s importing torch and transformers, most of
    # the smoke run's time otherwise.
    fresh_processes: bool = True


#: The smoke run's model: opus-mt's vocabulary (the test tokenizer's ids), 16 wide, one
#: layer a side, so that each child process spends its seconds importing, not computing.
TINY_SHAPE = {
    "d_model": 16,
    "encoder_layers": 1,
    "decoder_layers": 1,
    "encoder_attention_heads": 2,
    "decoder_attention_heads": 2,
    "encoder_ffn_dim": 32,
    "decoder_ffn_dim": 32,
}

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
    # Smoke: every phase and the report at toy size, for the test that keeps the
    # benchmark from rotting (tests/meta/test_speed_benchmark.py); its figures mean nothing.
    "smoke": Mode(
        "smoke",
        epoch=64,
        train_batches=1,
        validation_pool=4,
        validation_batches=None,
        reps=1,
        check_batch=2,
        check_steps=2,
        threads=1,
        shape=TINY_SHAPE,
        fresh_processes=False,
    ),
}
