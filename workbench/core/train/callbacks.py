"""The Trainer's callback: its logs as the workbench's events, the stop flag as a clean
stop at a step, a NaN loss seen (not logged as 0.0), a lost run-folder lease as a stop
that saves nothing; what it saw is how the loop ended (:mod:`.training_loop`).

Imports transformers at the top, like ``trainer``: only code that trains imports it."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from transformers import TrainerCallback

from workbench.core.events import EvalDone, EventSink, Note, TrainStep
from workbench.core.live.lease import RunLease, holds
from workbench.core.records.scores import finite_or_none
from workbench.core.train import distributed

if TYPE_CHECKING:
    from transformers import TrainerControl, TrainerState, TrainingArguments


class EventCallback(TrainerCallback):
    """Turns the Trainer's logs into events and the stop flag into a clean stop.

    What it saw on the way (a stop, a NaN loss) is what
    :func:`~workbench.core.train.training_loop.fine_tune` reports.
    """

    def __init__(
        self,
        emit: EventSink,
        stop: threading.Event,
        batch_size: int,
        lease: RunLease | None = None,
    ) -> None:
        self.emit = emit
        self.stop = stop
        self.batch_size = batch_size
        self.lease = lease
        self.lease_lost = False
        self.started = time.perf_counter()
        self.start_step = 0
        self.stopped_by_user = False
        self.nan_step: int | None = None

    def on_train_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: object,
    ) -> None:
        """Start the clock at the step the loop begins at (past 0 when the run is resumed)."""
        self.started = time.perf_counter()
        self.start_step = state.global_step

    def on_step_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: object,
    ) -> TrainerControl:
        """Stop here: saving nothing if the lease is lost, with a checkpoint if a stop was asked."""
        if self.lease_lost or not holds(self.lease):
            # Another worker writes into the run folder now: no log, evaluation or save.
            # (A sweep's trial runs in one process; a lease is never given to DDP ranks.)
            self.lease_lost = True
            control.should_training_stop = True
            control.should_log = control.should_evaluate = control.should_save = False
            return control
        # Every rank must stop at the same step, or one waits forever for the others.
        if distributed.any_rank(self.stop.is_set(), args.device) and not self.stopped_by_user:
            self.stopped_by_user = True
            control.should_training_stop = True
            control.should_save = True
        return control

    def on_epoch_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: object,
    ) -> TrainerControl:
        """No evaluation or save for an epoch ended by a stop, a NaN loss or a lost lease."""
        # A stop mid-epoch already saved its checkpoint at the step; the epoch-end
        # evaluation would score a partial epoch (and could become the "best" model,
        # which a resumed run would never pick), and a NaN model is not worth a save.
        # A run that lost its lease saves nothing at all.
        if not holds(self.lease):
            self.lease_lost = control.should_training_stop = True
        if self.stopped_by_user or self.nan_step is not None or self.lease_lost:
            control.should_evaluate = False
            control.should_save = False
        return control

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, float] | None = None,
        **kwargs: object,
    ) -> TrainerControl:
        """The Trainer's log as a TrainStep or EvalDone event; a NaN loss stops the run."""
        logs = logs or {}
        step = state.global_step
        if "loss" in logs:
            loss = finite_or_none(logs["loss"])
            if loss is None and self.nan_step is None:
                self.nan_step = step
                self.emit(
                    Note(
                        f"loss became {logs['loss']} at step {step}; stopping the run "
                        "and keeping the best model so far (try a lower --lr)",
                        "error",
                    )
                )
                control.should_training_stop = True
            elapsed = time.perf_counter() - self.started
            done = max(1, step - self.start_step)
            per_step = elapsed / done
            self.emit(
                TrainStep(
                    step=step,
                    max_steps=state.max_steps,
                    epoch=round(float(state.epoch or 0.0), 4),
                    loss=loss,
                    learning_rate=finite_or_none(logs.get("learning_rate")),
                    grad_norm=finite_or_none(logs.get("grad_norm")),
                    samples_per_second=round(self.batch_size * args.world_size / per_step, 2),
                    eta_seconds=round(per_step * max(0, state.max_steps - step), 1),
                )
            )
        if "eval_bleu" in logs:
            self.emit(
                EvalDone(
                    step=step,
                    epoch=round(float(state.epoch or 0.0), 4),
                    bleu=float(logs["eval_bleu"]),
                    chrf=float(logs.get("eval_chrf", 0.0)),
                    loss=finite_or_none(logs.get("eval_loss")),
                    comet=finite_or_none(logs.get("eval_comet")),
                )
            )
        return control
