"""How a run ends, its last stages. A finished run is scored *after* (:func:`after_training`:
its best model saved, or the average of its checkpoints where that scores higher, the
training copy let go, the held-out sets decoded as "before" was and scored, the samples
picked) and then published (:func:`publish_run`: the best model copied to where the user
looks, the translations, the first sample's attention and the summary written). A stopped
or failed run ends in :func:`end_early`: its summary, how to go on, and what it can keep.

The lease is checked before each stage's writes: decoding takes long, and another worker
may have taken the run folder meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.attention.kept_heatmaps import KeptView, keep_sample_heatmap, sample_heatmap
from workbench.core.evaluate.before_after import (
    HeldOutSets,
    pick_samples,
    score_after,
    score_rows,
    translate_after,
)
from workbench.core.evaluate.breakdown import gain_breakdown
from workbench.core.evaluate.comet_sets import add_comet
from workbench.core.evaluate.metricx_scores import add_metricx, run_metricx
from workbench.core.evaluate.picked_after import NeuralJudges, pick_after
from workbench.core.events import Note, RunDone
from workbench.core.live.lease import check_lease
from workbench.core.records.model_settings import ModelSettings
from workbench.core.records.picked_scores import PickedSample, PickedScores
from workbench.core.records.run_records import EarlyStopping, Sample
from workbench.core.records.scores import SetScores
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.layout import RunFolder
from workbench.core.run_folder.samples import write_picked_translations, write_translations
from workbench.core.run_folder.summary_file import write_summary
from workbench.core.train.averaging import Averaging, average_checkpoints
from workbench.core.train.checkpoints import keep_best_so_far, publish_model, save_best_model
from workbench.core.train.early_stop import report_early_stopping
from workbench.core.train.run_start import RunContext
from workbench.core.train.training_loop import TrainingOutcome, evaluation_history
from workbench.core.translate.picked import PickSettings
from workbench.errors import failure_text

if TYPE_CHECKING:  # trainer imports torch at its top
    from workbench.core.train.trainer import WorkbenchTrainer


@dataclass(frozen=True)
class AfterTraining:
    """What :func:`after_training` found, for :func:`publish_run` to write."""

    best_dir: Path  # the run's own copy of its best model
    stopping: EarlyStopping | None
    averaging: Averaging
    translations: dict[str, list[str]]  # "after", per held-out set
    scores: dict[str, SetScores]
    rows: dict[str, list[Sample]]  # each sentence before and after, scored
    samples: list[Sample]
    heatmap: KeptView | None  # the first sample's, drawn without torch
    #: The test set picked among candidates against beam's "after" (``--pick``).
    picked: tuple[PickedScores, list[PickedSample]] | None = None


def after_training(
    run: RunContext,
    trainer: WorkbenchTrainer,
    settings: ModelSettings,
    held_out: HeldOutSets,
    before: dict[str, list[str]],
) -> AfterTraining:
    """How early stopping ended the run, then the best model as saved (or the average, if
    better) decoded with the same decoding as ``before`` and scored against it."""
    config, emit, device = run.config, run.emit, run.precision.device
    run_dir, lease = run.run_dir, run.lease
    stopping = report_early_stopping(trainer, config, emit)

    best_dir = RunFolder(run_dir).best_model
    check_lease(lease, run_dir, trainer.state.global_step)
    save_best_model(trainer, best_dir, settings)
    averaging = average_checkpoints(trainer.state, config, held_out, best_dir, device, emit, lease)
    trainer.release_model()  # "after" loads best_model from disk: the training copy goes first
    after = translate_after(held_out, best_dir, device, emit, averaging.translations)
    scores = score_after(
        held_out, before, after, trainer.state.global_step, float(trainer.state.epoch or 0), emit
    )
    rows = score_rows(held_out, before, after)
    if config.comet:  # the trained model released: the scorer is never beside it
        scores, rows = add_comet(held_out, before, after, scores, rows, config.comet, device, emit)
    metricx = run_metricx(config, device)
    if metricx is not None:  # after COMET's scorer is let go: one scorer at a time
        scores, rows = add_metricx(held_out, before, after, scores, rows, metricx, emit)
    picked = None
    if (pick := PickSettings.requested(config, config.qe_model)) is not None:
        judges = NeuralJudges(config.comet, metricx, device)
        try:
            picked = pick_after(held_out, pick, best_dir, rows["test"], judges, emit)
        except Exception as err:  # the trained model and beam's scores are kept whatever
            emit(Note(f"the test set was not picked: {failure_text(err)}", "warning"))
    samples = pick_samples(rows["test"], config.num_samples_shown)
    for sample in samples:
        emit(sample)
    heatmap = sample_heatmap(best_dir, samples)  # the report's, drawn without torch
    return AfterTraining(
        best_dir, stopping, averaging, after, scores, rows, list(samples), heatmap, picked
    )


def publish_run(
    run: RunContext,
    trainer: WorkbenchTrainer,
    finished: AfterTraining,
    summary_with: partial[RunSummary],
    publish: bool,
) -> RunSummary:
    """The run's last writes: the best model published (unless ``publish`` is False), the
    translations, the kept heatmap, and the summary."""
    run_dir, best_dir, after = run.run_dir, finished.best_dir, finished.translations
    published = run.published
    check_lease(run.lease, run_dir, trainer.state.global_step)  # once more: decoding takes long
    if publish:
        publish_model(best_dir, published)
    write_translations(run_dir, finished.rows)
    if finished.picked is not None:
        write_picked_translations(run_dir, "test", finished.picked[1])
    keep_sample_heatmap(run_dir, best_dir, finished.heatmap)
    summary = summary_with(
        test=finished.scores["test"],
        validation=finished.scores["validation"],
        distinct_after=round(len(set(after["test"])) / max(1, len(after["test"])), 4),
        best_checkpoint=trainer.state.best_model_checkpoint,
        best_model=str(published if publish else best_dir),
        run_best_model=str(best_dir),
        samples=finished.samples,
        epochs=evaluation_history(trainer),
        early_stopping=finished.stopping,
        averaging=finished.averaging.record,
        picked=finished.picked[0] if finished.picked is not None else None,
        **gain_breakdown(finished.rows["test"], run.config.bleu_tokenize, run.config.source_lang),
    )
    write_summary(run_dir, summary)
    run.emit(RunDone("finished", str(run_dir), summary))
    return summary


def end_early(
    run: RunContext,
    trainer: WorkbenchTrainer,
    outcome: TrainingOutcome,
    summary_with: partial[RunSummary],
    settings: ModelSettings,
) -> RunSummary:
    """A stopped or failed run: its summary, how to go on, and after a NaN loss the best
    model so far (the weights in memory may be broken; the best checkpoint is not)."""
    emit, run_dir = run.emit, run.run_dir
    check_lease(run.lease, run_dir, trainer.state.global_step)
    error: str | None = None
    kept: Path | None = None
    if outcome.nan_step is not None:
        error = f"non-finite loss at step {outcome.nan_step}"
        kept = keep_best_so_far(trainer, run_dir, settings)
        emit(
            Note(
                f"best model so far kept in {kept}"
                if kept
                else "no evaluation had finished yet, so there is no best model to keep; "
                f"{run.published} was left as it was",
                "warning",
            )
        )
    summary = summary_with(error=error, run_best_model=str(kept) if kept else None)
    write_summary(run_dir, summary)
    if outcome.stopped_by_user:
        emit(
            Note(
                f"stopped at step {trainer.state.global_step} with a checkpoint; "
                "continue with: workbench train --resume"
            )
        )
    emit(RunDone(outcome.status, str(run_dir), summary))
    return summary
