"""Early stopping on validation BLEU (``--early-stopping PATIENCE``), and the one line that
says when and why a run stopped.

The stopping itself is transformers' ``EarlyStoppingCallback``: the Trainer evaluates and
saves every epoch and keeps the best checkpoint (``metric_for_best_model="bleu"``), so its
patience counts epochs, and with its threshold of 0 an epoch whose BLEU is not strictly
above the best so far (an equal one included) counts as no gain. The run then ends with
its best epoch, as every run does. Its count lives in each checkpoint's
``trainer_state.json`` (``stateful_callbacks``), which the Trainer reads back on resume
(``restore_callback_states_from_checkpoint``), so a resumed run goes on counting where the
stopped one was.
"""

from __future__ import annotations

from typing import Any

from workbench.core.config.run_config import RunConfig
from workbench.core.events import EventSink, Note
from workbench.core.records.run_records import EarlyStopping
from workbench.core.views.training_text import early_stopping_text


def early_stopping_callback(patience: int) -> Any:
    """transformers' callback that ends training after ``patience`` epochs without gain."""
    from transformers import EarlyStoppingCallback

    return EarlyStoppingCallback(early_stopping_patience=patience)


def early_stopping_outcome(trainer: Any, patience: int, epochs: float) -> EarlyStopping | None:
    """How early stopping ended a finished training loop, or None without a patience (or
    without any evaluation to judge by)."""
    if patience <= 0:
        return None
    from transformers import EarlyStoppingCallback

    state = trainer.state
    evaluations = [log for log in state.log_history if "eval_bleu" in log]
    best = next((log for log in evaluations if log["step"] == state.best_global_step), None)
    if not evaluations or best is None:
        return None
    # On resume the Trainer replaces the callback it was given with one rebuilt from the
    # checkpoint's state: the one in the handler now is the one that counted.
    counters = [
        cb.early_stopping_patience_counter
        for cb in trainer.callback_handler.callbacks
        if isinstance(cb, EarlyStoppingCallback)
    ]
    last = round(float(evaluations[-1]["epoch"]), 4)
    return EarlyStopping(
        patience=patience,
        best_epoch=round(float(best["epoch"]), 4),
        best_bleu=float(best["eval_bleu"]),
        stopped_after_epoch=last,
        epochs_planned=epochs,
        # Run out at the last planned epoch, it cut nothing short.
        stopped=bool(counters) and counters[0] >= patience and last < epochs - 1e-6,
    )


def report_early_stopping(trainer: Any, config: RunConfig, emit: EventSink) -> EarlyStopping | None:
    """Say in one line how early stopping ended the run; its summary record (None when
    the run had no patience)."""
    outcome = early_stopping_outcome(trainer, config.early_stopping, config.epochs)
    if outcome is None:
        return None
    emit(Note(early_stopping_text(outcome)))
    return outcome
