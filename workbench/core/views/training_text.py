"""How a run's early stopping and checkpoint averaging are said, from their summary
records (the line the run prints and the report's row are one wording), and the
Training pane's lines about a run: its settings, and how its last run ended."""

from __future__ import annotations

from typing import Any

from workbench.core.config.run_config import RunConfig
from workbench.core.records.run_records import AveragingRecord, EarlyStopping
from workbench.core.records.scores import N_BOOTSTRAP
from workbench.core.records.summary import RunSummary, best_epoch
from workbench.core.views.event_text import best_epoch_text
from workbench.core.views.score_text import format_p


def _epoch(value: Any) -> str:
    """``4`` for a whole epoch, ``2.5`` for the end of a fractional run."""
    return f"{round(float(value), 2):g}" if isinstance(value, int | float) else "?"


def early_stopping_text(record: EarlyStopping) -> str:
    """``early stopping: validation BLEU has not risen for 2 epochs since epoch 4 (12.31);
    stopped after epoch 6 of 30``, or that the patience never ran out."""
    patience = record.patience
    best = f"epoch {_epoch(record.best_epoch)} ({record.best_bleu:.2f})"
    planned = _epoch(record.epochs_planned)
    if record.stopped:
        return (
            f"early stopping: validation BLEU has not risen for {patience} "
            f"epoch{'s' if patience != 1 else ''} since {best}; stopped after "
            f"epoch {_epoch(record.stopped_after_epoch)} of {planned}"
        )
    return (
        f"early stopping (patience {patience}) did not trigger: all {planned} epochs ran; "
        f"the best was {best}"
    )


def averaging_text(record: AveragingRecord) -> str:
    """``averaging the last 3 checkpoints (epochs 4, 5, 6): validation BLEU 12.31 → 12.58
    (+0.27, p = 0.040), chrF … against the best checkpoint (epoch 5); the average is kept``."""
    if record.skipped:
        return f"checkpoint averaging skipped: {record.skipped}"
    epochs = record.epochs
    what = f"last {len(epochs)}" if record.which == "last" else f"{len(epochs)} best"
    scores = record.validation
    if scores is not None and record.p_value is not None:
        best, averaged = scores.best, scores.averaged
        change = (
            f"validation BLEU {best.bleu:.2f} → {averaged.bleu:.2f} "
            f"({averaged.bleu - best.bleu:+.2f}, "
            f"{format_p(record.p_value, N_BOOTSTRAP)}), chrF {best.chrf:.2f} → "
            f"{averaged.chrf:.2f}"
        )
    else:
        change = "validation scores not recorded"
    kept = (
        "the average is kept"
        if record.kept == "averaged"
        else "the best checkpoint is kept"
        + (f" (the average stays in {record.model})" if record.model else "")
    )
    return (
        f"averaging the {what} checkpoints (epochs {', '.join(_epoch(e) for e in epochs)}): "
        f"{change}, against the best checkpoint (epoch {_epoch(record.best_epoch)}); "
        f"{kept}"
    )


def settings_line(c: RunConfig) -> str:
    """A run's settings in one line, as the Training pane shows them above its charts."""
    return (
        f"{c.preset}: {c.model} on {c.data}"
        + (f" ({c.data_config})" if c.data_config else "")
        + f" · max len {c.max_source_length}/{c.max_target_length} · beams {c.num_beams}"
        + f" · BLEU tokenize={c.bleu_tokenize}"
        + (
            f" · LoRA rank {c.lora_rank}, alpha {c.lora_alpha}"
            + (f" on {c.lora_targets}" if c.lora_targets else "")
            if c.lora
            else ""
        )
        + (" · gradient checkpointing" if c.gradient_checkpointing else "")
        + (f" · early stopping: patience {c.early_stopping}" if c.early_stopping else "")
        + (
            f" · averaging the {c.average} {c.average_checkpoints} checkpoints"
            if c.average_checkpoints
            else ""
        )
        + (f" · COMET {c.comet}" if c.comet else "")
        + (f" · MetricX {c.metricx}" if c.metricx else "")
        + f" · out {c.output_dir}"
    )


def last_run_line(name: str, status: str, summary: RunSummary | None) -> str:
    """``last run 20260101-000000-demo: finished · best epoch 1``, and the test set's
    COMET when the run scored it."""
    best = f" · {best_epoch_text(summary)}" if summary and best_epoch(summary) is not None else ""
    resume = " (r resumes it)" if status == "stopped" else ""
    comet = summary.test.comet if summary and summary.test else None
    scored = f" · test {comet.metric} {comet.before:.2f} → {comet.after:.2f}" if comet else ""
    return f"last run {name}: {status}{best}{scored}{resume}"
