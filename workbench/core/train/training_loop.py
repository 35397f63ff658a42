"""The training loop run: from a checkpoint when resuming, a full disk or a read-only folder
said in one line, how the loop ended (:class:`TrainingOutcome`), and the evaluations it
logged, read back as the summary's epochs.

Torch-free at import: it only drives the Trainer :mod:`.recipe` built.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.records.run_records import EpochLog
from workbench.core.records.status import EndStatus
from workbench.core.records.typed import record_of
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from transformers import Seq2SeqTrainer

    from workbench.core.train.callbacks import EventCallback


@dataclass(frozen=True)
class TrainingOutcome:
    """How the training loop ended (:func:`fine_tune`): what the run's summary records and
    what the run does next (score and publish, or keep what it can and say how to go on)."""

    seconds: float  # the loop's wall-clock time
    stopped_by_user: bool  # the stop flag ended it at a step, with a checkpoint
    nan_step: int | None  # the step whose loss was not finite, if one was
    lease_lost: bool = False  # another writer took the run folder: nothing more is written

    @property
    def status(self) -> EndStatus:
        """``finished``, ``stopped`` (by the user, with a checkpoint) or ``failed`` (NaN);
        a run that lost its lease has none, as it writes no summary."""
        if self.nan_step is not None:
            return "failed"
        return "stopped" if self.stopped_by_user else "finished"


def fine_tune(
    trainer: Seq2SeqTrainer, events: EventCallback, checkpoint: Path | None, run_dir: Path
) -> TrainingOutcome:
    """Run the training loop (from ``checkpoint`` when resuming) and say how it ended.

    ``events`` is the callback given to ``trainer``: it stops the loop at the stop flag or
    a NaN loss, and so knows which ended it.

    A full disk or a folder gone read-only while saving becomes one line with the fix: the
    checkpoint being written was staged, so the last complete one is still there to
    resume from.
    """
    started = time.perf_counter()
    try:
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    except OSError as err:
        raise WorkbenchError(
            f"could not write to '{run_dir}' at step {trainer.state.global_step} "
            f"({err.strerror or err}); free some space, then continue with: "
            "workbench train --resume"
        ) from None
    except ValueError as err:
        if checkpoint is None or "parameter group" not in str(err):
            raise
        # A checkpoint whose optimizer covers other parameters than this run trains: one
        # written by a version that trained a loaded Marian's frozen position tables.
        raise WorkbenchError(
            f"{checkpoint} was saved by a run that trained other parameters than this one "
            "does (a workbench from before Marian's position tables were kept frozen), so "
            "it cannot be continued; start the run again without --resume"
        ) from None
    return TrainingOutcome(
        seconds=time.perf_counter() - started,
        stopped_by_user=events.stopped_by_user,
        nan_step=events.nan_step,
        lease_lost=events.lease_lost,
    )


def evaluation_history(trainer: Seq2SeqTrainer) -> list[EpochLog]:
    """The per-epoch evaluations logged during training, non-finite values left out (a
    value the log has and :class:`EpochLog` does not, such as a step's own timing, too)."""
    fields = {f.name for f in dataclasses.fields(EpochLog)}
    return [
        record_of(
            EpochLog,
            {
                k: v
                for k, v in log.items()
                if k in fields and not (isinstance(v, float) and not math.isfinite(v))
            },
        )
        for log in trainer.state.log_history
        if "eval_bleu" in log
    ]
