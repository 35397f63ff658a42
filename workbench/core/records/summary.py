"""What a run did and scored: :class:`RunSummary`, the record of ``summary.json`` (written
and read at its path by :mod:`workbench.core.run_folder.summary_file`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.decoding import DecodeOptions
from workbench.core.records.objective_record import ObjectiveRecord
from workbench.core.records.picked_scores import PickedScores
from workbench.core.records.run_records import (
    AveragingRecord,
    BaselineRecord,
    BleuChrf,
    CleaningRecord,
    EarlyStopping,
    EpochLog,
    Precision,
    Sample,
    as_json,
)
from workbench.core.records.scores import LengthBucket, MostChanged, SetScores
from workbench.core.records.status import EndStatus
from workbench.core.records.typed import decode


@dataclass(frozen=True)
class RunSummary:
    """What a run did and scored: ``summary.json``, typed.

    Frozen: a run builds its summary once, when it ends, from what it knows then.

    Any value may be missing (None): a stopped run has no after-scores, a failed one little
    else, a hand-edited file anything. Front ends show a missing value as
    :data:`~workbench.core.views.numbers.MISSING`, never as 0.00. A missing value is left
    out of the file, and :meth:`from_dict` reads an absent, ``null`` or ill-typed value as
    None and ignores keys no field has.
    """

    status: EndStatus | None = None
    error: str | None = None  # why a failed run failed
    preset: str | None = None
    model: str | None = None
    data: str | None = None  # where the pairs came from
    data_revision: str | None = None  # the Hub dataset's commit
    train_pairs: int | None = None
    validation_pairs: int | None = None
    test_pairs: int | None = None
    bleu_tokenize: str | None = None
    decoding: DecodeOptions | None = None  # how before and after were decoded
    precision: Precision | None = None
    #: Corpus BLEU and chrF before fine-tuning, per set (also in ``test``/``validation``).
    before: dict[str, BleuChrf] | None = None
    train_seconds: float | None = None
    global_step: int | None = None
    run_dir: str | None = None
    base_model: str | None = None  # the model before fine-tuning, as the console loads it
    #: The headline: never used to choose the epoch or the recipe.
    test: SetScores | None = None
    #: Chose the best epoch, so its after-score is optimistic.
    validation: SetScores | None = None
    distinct_after: float | None = None  # share of distinct test translations after
    best_checkpoint: str | None = None
    best_model: str | None = None  # the published copy in the output folder
    run_best_model: str | None = None  # the run's own copy
    samples: list[Sample] | None = None  # the test sentences shown
    epochs: list[EpochLog] | None = None  # the Trainer's per-epoch evaluation logs
    #: What cleaning dropped before the split: each rule's count and its settings.
    cleaning: CleaningRecord | None = None
    #: The model authors' published score on the test set, and whether "before" is near it.
    baseline: BaselineRecord | None = None
    #: When and why training stopped before its last epoch (``--early-stopping``).
    early_stopping: EarlyStopping | None = None
    #: The averaged checkpoints' validation score against the best one's, and the choice.
    averaging: AveragingRecord | None = None
    #: Test BLEU and chrF before/after per source-length bucket.
    by_length: list[LengthBucket] | None = None
    #: The test sentences whose sentence chrF rose and fell most.
    most_changed: MostChanged | None = None
    #: The test set's "after" picked among candidates, against beam's (``--pick``).
    picked: PickedScores | None = None
    #: What the run trained towards past the references (``--objective``), and its ceiling.
    objective: ObjectiveRecord | None = None

    def scores(self, role: str) -> SetScores | None:
        """The ``test`` or ``validation`` scores, if the run has them."""
        return self.test if role == "test" else self.validation if role == "validation" else None

    def own_model(self) -> str | None:
        """The run's own copy of its best model while it is on disk (``best_model`` is the
        output folder's published copy, which a later run replaces)."""
        own = self.run_best_model
        return own if own and Path(own).is_dir() else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of summary.json (missing values left out)."""
        out: dict[str, Any] = as_json(self)
        return out

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], notes: list[str] | None = None, where: str = ""
    ) -> RunSummary:
        """Read a summary.json object: a missing or ill-typed value becomes None, and each
        value read so is said in ``notes``, each note starting with ``where`` (the file's
        name; :func:`~workbench.core.records.typed.decode`)."""
        summary = decode(cls, data, notes, where)
        return summary if summary is not None else cls()


def selected_by(summary: RunSummary) -> str:
    """``BLEU``, or ``COMET`` for a run that chose its best epoch by validation COMET
    (``--select-on comet``: only such a run scores COMET after each epoch)."""
    return "COMET" if any(e.eval_comet is not None for e in summary.epochs or []) else "BLEU"


def best_epoch(summary: RunSummary) -> float | None:
    """The epoch whose validation score chose the best model (BLEU, or COMET when it chose:
    :func:`selected_by`; the first of equal ones, as the Trainer keeps the first best)."""
    key = f"eval_{selected_by(summary).lower()}"
    logs = [(score, e) for e in summary.epochs or [] if (score := getattr(e, key)) is not None]
    if not logs:
        return None
    _, best = max(logs, key=lambda pair: pair[0])  # max returns the first of ties
    return float(best.epoch) if best.epoch is not None else None
