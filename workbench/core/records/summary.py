"""What a run did and scored: ``summary.json``, as :class:`RunSummary`, written and read."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from workbench.core.atomic import write_json
from workbench.core.records.files import read_json_dict
from workbench.core.records.scores import SetScores
from workbench.core.records.status import EndStatus, end_status

#: What a run did and scored (:class:`RunSummary`), in its run folder.
SUMMARY_FILE = "summary.json"


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
    decoding: dict[str, Any] | None = None  # DecodeOptions of before/after
    precision: dict[str, Any] | None = None  # Precision.to_dict() of the run
    #: Corpus BLEU and chrF before fine-tuning, per set (also in ``test``/``validation``).
    before: dict[str, Any] | None = None
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
    samples: list[dict[str, Any]] | None = None  # Sample fields, per test sentence shown
    epochs: list[dict[str, Any]] | None = None  # the Trainer's per-epoch evaluation logs
    #: What cleaning dropped before the split: each rule's count and its settings.
    cleaning: dict[str, Any] | None = None
    #: The model authors' published score on the test set, and whether "before" is near it.
    baseline: dict[str, Any] | None = None
    #: When and why training stopped before its last epoch (``--early-stopping``).
    early_stopping: dict[str, Any] | None = None
    #: The averaged checkpoints' validation score against the best one's, and the choice.
    averaging: dict[str, Any] | None = None
    #: Test BLEU and chrF before/after per source-length bucket.
    by_length: list[dict[str, Any]] | None = None
    #: The test sentences whose sentence chrF rose and fell most.
    most_changed: dict[str, Any] | None = None

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
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = value.to_dict() if isinstance(value, SetScores) else value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSummary:
        """Read a summary.json object; a missing or ill-typed value becomes None."""

        def of_type(key: str, *types: type) -> Any:
            value = data.get(key)
            if isinstance(value, bool) and bool not in types:
                return None
            return value if isinstance(value, types) else None

        def rows(key: str) -> list[dict[str, Any]] | None:
            value = data.get(key)
            return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else None

        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name in ("test", "validation"):
                values[f.name] = SetScores.from_dict(data.get(f.name))
            elif f.name == "status":
                values[f.name] = end_status(data.get(f.name))
            elif str(f.type) == "list[dict[str, Any]] | None":
                values[f.name] = rows(f.name)
            else:
                values[f.name] = of_type(f.name, *_FIELD_TYPES[str(f.type)])
        return cls(**values)

    def write(self, run_dir: Path) -> None:
        """Write ``run_dir/summary.json`` atomically."""
        write_json(run_dir / SUMMARY_FILE, self.to_dict())


#: The JSON types each kind of scalar field accepts (an int is a fine float).
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "str | None": (str,),
    "int | None": (int,),
    "float | None": (int, float),
    "dict[str, Any] | None": (dict,),
}


def selected_by(summary: RunSummary) -> str:
    """``BLEU``, or ``COMET`` for a run that chose its best epoch by validation COMET
    (``--select-on comet``: only such a run scores COMET after each epoch)."""
    return "COMET" if any("eval_comet" in e for e in summary.epochs or []) else "BLEU"


def best_epoch(summary: RunSummary) -> float | None:
    """The epoch whose validation score chose the best model (BLEU, or COMET when it chose:
    :func:`selected_by`; the first of equal ones, as the Trainer keeps the first best)."""
    key = f"eval_{selected_by(summary).lower()}"
    logs = [e for e in summary.epochs or [] if isinstance(e.get(key), int | float)]
    if not logs:
        return None
    best = max(logs, key=lambda e: e[key])  # max returns the first of ties
    epoch = best.get("epoch")
    return float(epoch) if isinstance(epoch, int | float) else None


def read_summary(run_dir: Path) -> RunSummary | None:
    """A run's summary.json, or None when missing, unreadable or not a JSON object."""
    data = read_json_dict(run_dir / SUMMARY_FILE)
    return RunSummary.from_dict(data) if data is not None else None
