"""The records a run's ``summary.json`` (and ``config.json``) hold beside its scores, typed.

Each is written by the step that knows it (cleaning, the Trainer, early stopping, averaging,
the published baseline) and read back by every front end through
:func:`~workbench.core.records.typed.decode`, so no reader looks a key up in a raw dict
and a hand-edited or older file reads the same everywhere.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

#: How before and after are decoded, whatever the training precision
#: (:func:`~workbench.core.model.load.fp32_decoding`).
FP32_DECODING = "fp32, TF32 off"


def as_json(value: Any) -> Any:
    """``value`` as the JSON its record writes: records as objects, a field whose default is
    None left out when it is None (a missing value is left out of the file)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if item is None and f.default is None:
                continue
            out[f.name] = as_json(item)
        return out
    if isinstance(value, list | tuple):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Precision:
    """The arithmetic a run trains and decodes in, resolved once on the device it runs on.

    Mixed precision is for training only: before and after are both decoded in fp32 with
    TF32 off, so that the two sides of the comparison, and the console, run the same
    arithmetic. Recorded in config.json and summary.json (:meth:`to_dict`), so a report
    says how the numbers were computed.
    """

    device: str  # what pick_device chose: "cuda", "mps" or "cpu"
    training: Literal["fp16", "bf16", "fp32"]
    # TF32 matmuls for what still runs in fp32, on the GPUs that have bf16 (Ampere+).
    training_tf32: bool
    decoding: str = FP32_DECODING

    @property
    def fp16(self) -> bool:
        """Training under fp16 autocast (CUDA only)."""
        return self.training == "fp16"

    @property
    def bf16(self) -> bool:
        """Training under bf16 autocast (CUDA or the CPU)."""
        return self.training == "bf16"

    def to_dict(self) -> dict[str, Any]:
        """The recorded form: the ``precision`` object of config.json and summary.json."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Sample:
    """One before/after translation of a held-out source, with its sentence BLEU and chrF,
    and its COMET segment scores (×100) and MetricX ones (0-25, lower is better) when the
    run scored them: a line of ``<set>_translations.jsonl`` and a sample of
    ``summary.json``."""

    source: str
    reference: str
    before: str
    after: str
    bleu_before: float
    bleu_after: float
    chrf_before: float | None = None  # None in a run from before sentence chrF was kept
    chrf_after: float | None = None
    comet_before: float | None = None
    comet_after: float | None = None
    metricx_before: float | None = None
    metricx_after: float | None = None


@dataclass(frozen=True)
class EpochLog:
    """One per-epoch evaluation the Trainer logged (``summary.json``'s ``epochs``)."""

    epoch: float | None = None
    step: int | None = None
    eval_loss: float | None = None
    eval_bleu: float | None = None
    eval_chrf: float | None = None
    eval_comet: float | None = None  # only when COMET chose the best epoch
    eval_distinct: float | None = None
    eval_runtime: float | None = None
    eval_samples_per_second: float | None = None
    eval_steps_per_second: float | None = None


@dataclass(frozen=True)
class BleuChrf:
    """Corpus BLEU and chrF of one system on one set."""

    bleu: float
    chrf: float


@dataclass(frozen=True)
class CleaningRecord:
    """What cleaning did before the split: each rule's count and the settings it ran with
    (``cleaning`` in config.json and summary.json)."""

    rules: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    pairs_in: int | None = None
    dropped: int | None = None
    long_measured: bool = False  # False when no tokenizer was at hand
    drop_long: bool = False
    min_script_share: float | None = None
    max_length_ratio: float | None = None


@dataclass(frozen=True)
class BaselineRecord:
    """The model authors' published score on the test set, and how far "before" is from it."""

    bleu: float
    before_bleu: float
    difference: float
    chrf: float | None = None
    bleu_tokenize: str | None = None
    source: str | None = None
    url: str | None = None
    test_set: str | None = None
    warning: str | None = None  # None within tolerance, else how far and the likely causes


@dataclass(frozen=True)
class EarlyStopping:
    """How a run with a patience ended: ``summary.json``'s ``early_stopping``."""

    patience: int
    best_epoch: float
    best_bleu: float  # the Trainer's per-epoch validation BLEU of the best epoch
    stopped_after_epoch: float  # the last epoch evaluated
    epochs_planned: float
    stopped: bool  # the patience ran out before the last planned epoch


@dataclass(frozen=True)
class AveragingScores:
    """Validation scores of the best checkpoint and of the average."""

    best: BleuChrf
    averaged: BleuChrf


@dataclass(frozen=True)
class AveragingRecord:
    """What ``--average-checkpoints`` did: ``summary.json``'s ``averaging``."""

    k: int
    which: str  # "best" or "last"
    epochs: list[float] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)
    kept: str | None = None  # "averaged" or "best"
    skipped: str | None = None  # why averaging did not run
    best_checkpoint: str | None = None
    best_epoch: float | None = None
    validation: AveragingScores | None = None
    p_value: float | None = None
    model: str | None = None  # where the average is (the best model's folder when kept)
