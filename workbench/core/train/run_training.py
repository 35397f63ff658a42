"""One fine-tuning run, start to finish: the function every front end calls.

``run_training`` reads as the job does, in six stages over one
:class:`~.run_start.RunContext` (what the stages share), each a function that :func:`_run`
calls in turn: *prepare* (every check, the memory plan, the data, the run folder and its
first lines: :mod:`.run_start`), the *model* (loaded or built: :mod:`.run_model`), the
held-out sets scored *before*, *train* (the Seq2SeqTrainer: :mod:`.recipe`,
:mod:`.trainer`, :mod:`.callbacks`, :mod:`.training_loop`), the same sets scored *after*
with the same decoding, and *publish* (the best model, the first sample's attention kept
for the report, the summary); the last two are :mod:`.run_end`, the middle three are here.
:mod:`workbench.core.evaluate.before_after` decodes and scores the held-out sets.

Progress goes to an event sink and the run folder's ``train.log``; a ``threading.Event``
(or a stop request left in the folder) stops training at the next step with a
checkpoint; a lost ``RunLease`` (a sweep's trial taken for dead) stops it at the next
step with nothing more written (:class:`~workbench.core.live.lease.LeaseLost`, raised at
one check and caught once), and the run returns ``lost``. The run holds its folder for
its whole life (``core/live/writer.py``).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from workbench.core.config.run_config import RunConfig
from workbench.core.data.hub_retries import reporting_retries
from workbench.core.evaluate.before_after import HeldOutSets, score_before, translate_before
from workbench.core.events import EventSink, Note, Phase
from workbench.core.languages import Direction
from workbench.core.live.lease import LeaseLost, RunLease, check_lease
from workbench.core.live.writer import RunWriter
from workbench.core.model.family import shard_blocks
from workbench.core.records.model_settings import ModelSettings
from workbench.core.records.run_records import BaselineRecord, BleuChrf
from workbench.core.records.status import RunOutcome
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.layout import RunFolder
from workbench.core.train import distributed
from workbench.core.train.lora import trainable_line, with_adapters
from workbench.core.train.run_end import after_training, end_early, publish_run
from workbench.core.train.run_model import (
    configure_generation,
    keep_initial_model,
    load_run_model,
    model_settings,
)
from workbench.core.train.run_objective import (
    ObjectiveData,
    ceiling,
    objective_data,
    reference_copy,
    stopped_while_ranking,
    worse_than_start,
)
from workbench.core.train.run_start import RunContext, model_line, prepare
from workbench.core.train.sharding import shard_line
from workbench.core.train.training_loop import TrainingOutcome, fine_tune
from workbench.core.translate.translator import Translator

if TYPE_CHECKING:  # trainer imports torch at its top: run_training imports it once it trains
    from workbench.core.train.trainer import WorkbenchTrainer

#: The status of a run that lost its lease: it wrote no summary and no event for it.
LOST: Final = "lost"


@dataclass
class RunResult:
    """What a run left behind."""

    status: RunOutcome
    run_dir: Path
    summary: RunSummary


def run_training(
    config: RunConfig,
    on_event: EventSink | None = None,
    stop: threading.Event | None = None,
    resume: bool = False,
    run_dir: Path | None = None,
    publish: bool = True,
    lease: RunLease | None = None,
) -> RunResult:
    """Fine-tune as configured and return the run's status, folder and summary.

    The run holds its folder for its whole life (:class:`RunWriter`): a second writer is
    refused with :class:`~workbench.core.live.writer.RunFolderBusy`, and the folder's record
    says how the run ended -- also when it ends by an exception. See :func:`_run` for
    the rest.
    """
    stop = stop or threading.Event()
    writer = RunWriter(stop)
    try:
        result = _run(config, on_event, stop, resume, run_dir, publish, lease, writer)
    except LeaseLost as lost:
        # Nothing written, not even the summary: the caller, a sweep, says so in one line;
        # another worker owns the folder now.
        summary = RunSummary(run_dir=str(lost.run_dir), global_step=lost.step)
        result = RunResult(LOST, lost.run_dir, summary)
    except KeyboardInterrupt:  # a second Ctrl-C: aborted, its last complete checkpoint kept
        writer.release("stopped", error="aborted without a checkpoint (Ctrl-C twice)")
        raise
    except BaseException as err:
        writer.release("failed", error=f"{type(err).__name__}: {err}")
        raise
    writer.release(result.status)
    return result


def _run(
    config: RunConfig,
    on_event: EventSink | None,
    stop: threading.Event,
    resume: bool,
    run_dir: Path | None,
    publish: bool,
    lease: RunLease | None,
    writer: RunWriter,
) -> RunResult:
    """The run itself, once :func:`run_training` has set up its writer: its stages in order.

    Everything a user can get wrong (Hub access, paths, data files, output folder) is
    checked before the run folder is created, so a mistake leaves nothing behind.
    ``run_dir`` is for a caller that must know the folder before the run starts (a sweep
    records it in its study, so a killed trial can be found again): an empty folder gets a
    new run, one with a config.json is continued as ``resume`` would continue it.
    ``publish=False`` leaves ``<output>/best_model`` alone (a sweep publishes only its best
    trial, at the end): the run's summary then names the run's own copy as its model.
    ``lease`` is the right to write into ``run_dir`` (:class:`RunLease`): checked before
    every write, and at every training step, once the folder exists; once lost, the run
    raises :class:`LeaseLost`, which :func:`run_training` turns into its ``lost`` result.
    """
    run = prepare(config, on_event, resume, run_dir, lease, writer)
    loaded = _load_model(run)
    before = _before_training(run, loaded)
    ranked = objective_data(
        run, loaded.model, loaded.tokenizer, loaded.direction, before.held_out.options, stop
    )
    if ranked is not None and ranked.stopped:  # what was ranked is cached for --resume
        summary = stopped_while_ranking(run, _summary_with(run, loaded, before, 0), ranked)
        return RunResult("stopped", run.run_dir, summary)
    trainer, outcome = _train(run, loaded, stop, ranked)
    if not run.main:  # rank 0 writes the outputs; the others are done
        return RunResult(outcome.status, run.run_dir, RunSummary())
    step = trainer.state.global_step
    summary_with = _summary_with(run, loaded, before, step, outcome)
    if ranked is not None:
        summary_with = partial(summary_with, objective=ranked.record())
    if outcome.status != "finished":
        summary = end_early(run, trainer, outcome, summary_with, loaded.settings)
        return RunResult(outcome.status, run.run_dir, summary)
    finished = after_training(run, trainer, loaded.settings, before.held_out, before.translations)
    if ranked is not None:  # the ceiling, once the tuned model is scored and let go
        scores = ceiling(run, ranked, before.held_out, finished.rows["test"])
        summary_with = partial(summary_with, objective=ranked.record(scores))
        worse_than_start(run, finished.scores["validation"])
    summary = publish_run(run, trainer, finished, summary_with, publish)
    return RunResult("finished", run.run_dir, summary)


# --------------------------------------------------------------------------- the stages


@dataclass(frozen=True)
class LoadedModel:
    """The model stage's work: the model to fine-tune and how the run uses it."""

    model: Any
    tokenizer: Any
    direction: Direction
    #: What every model the run saves needs besides its weights (workbench.json).
    settings: ModelSettings
    #: The model "before" fine-tuning, as the console and the report load it.
    base_model: str


def _load_model(run: RunContext) -> LoadedModel:
    """The model loaded (or built), its generation bounded, on the run's device."""
    config, run_dir, emit, lease = run.config, run.run_dir, run.emit, run.lease
    check_lease(lease, run_dir)
    _freeze_libraries()
    emit(Phase("model", config.model))
    with distributed.main_first(), reporting_retries(emit):
        model, tokenizer, direction = load_run_model(config, run.data, run_dir, emit)
    configure_generation(model, config)
    model.to(run.precision.device)
    emit(Note(model_line(model, run.precision)))
    emit(Note(f"languages: {direction.describe()}"))
    settings = model_settings(config, direction, run_dir)
    check_lease(lease, run_dir)
    base_model = keep_initial_model(model, tokenizer, config, direction, run_dir)
    return LoadedModel(model, tokenizer, direction, settings, base_model)


def _freeze_libraries() -> None:
    """Move what is alive now out of the garbage collector's sight (``gc.freeze``) when the
    run owns its process: it runs on the main thread (``train --headless``, a sweep's
    worker, a ``torchrun`` rank), not on a TUI's worker thread beside widgets that come
    and go.

    By the model stage the libraries are imported: some half a million objects that live
    as long as the process, which every full collection would walk again (0.2 s each
    here; the Trainer and accelerate ask for three, and allocation triggers more). What
    the run makes from here on is collected as before."""
    if threading.current_thread() is threading.main_thread():
        gc.collect()
        gc.freeze()


@dataclass(frozen=True)
class BeforeTraining:
    """The held-out sets and, on rank 0, their "before": translated and scored."""

    held_out: HeldOutSets
    translations: dict[str, list[str]]
    scores: dict[str, BleuChrf]
    #: The test set's published score, where there is one.
    baseline: BaselineRecord | None


def _before_training(run: RunContext, loaded: LoadedModel) -> BeforeTraining:
    """Once, by rank 0, with the plain fp32 model the Trainer has not wrapped yet."""
    held_out = HeldOutSets.of(run.data, run.config)
    before: dict[str, list[str]] = {}
    before_scores: dict[str, BleuChrf] = {}
    baseline: BaselineRecord | None = None
    if run.main:
        translator = Translator(
            loaded.model, loaded.tokenizer, loaded.direction, run.config.max_source_length
        )
        before = translate_before(held_out, translator, run.run_dir, run.emit)
        before_scores, baseline = score_before(held_out, before, run.emit, translator)
    distributed.barrier()
    return BeforeTraining(held_out, before, before_scores, baseline)


def _train(
    run: RunContext, loaded: LoadedModel, stop: threading.Event, ranked: ObjectiveData | None
) -> tuple[WorkbenchTrainer, TrainingOutcome]:
    """Fine-tune with the Trainer (LoRA's adapters put on first, where asked), from the
    run's checkpoint when it resumes, on the references or on what ``ranked`` made of
    the starting model's candidates; a lost lease ends the run here."""
    from workbench.core.train.callbacks import EventCallback
    from workbench.core.train.recipe import build_trainer, tensorboard_callback

    config, run_dir, emit, lease = run.config, run.run_dir, run.emit, run.lease
    model = loaded.model
    check_lease(lease, run_dir)
    reference = reference_copy(model, ranked, config.lora)  # DPO's, before any step
    if config.lora:  # after "before", which the plain model decoded
        model = with_adapters(model, config)
        emit(Note(trainable_line(model)))
    emit(Phase("train"))
    callback = EventCallback(emit, stop, config.batch_size, lease)
    build: Callable[..., WorkbenchTrainer] = build_trainer
    rows: Any = run.data.train if ranked is None else ranked.targets
    if ranked is not None and ranked.objective.preference:
        from workbench.core.train.preference_trainer import build_preference_trainer

        build, rows = partial(build_preference_trainer, reference=reference), ranked.triples
    if config.shard:
        emit(Note(shard_line(config, shard_blocks(model))))
    trainer = build(
        config,
        model,
        loaded.tokenizer,
        rows,
        run.data.validation,
        run_dir,
        run.precision,
        [callback],
        direction=loaded.direction,
        lease=lease,
    )
    trainer.model_settings = loaded.settings  # a sharded checkpoint keeps it for its merge
    if config.shard:
        from workbench.core.train.shard_report import ShardReport

        trainer.add_callback(ShardReport(emit))
    if config.report_to == "tensorboard" and run.main:
        trainer.add_callback(tensorboard_callback(RunFolder(run_dir).tensorboard))
    outcome = fine_tune(trainer, callback, run.checkpoint, run_dir)
    if outcome.lease_lost:
        raise LeaseLost(run_dir, trainer.state.global_step)
    return trainer, outcome


def _summary_with(
    run: RunContext,
    loaded: LoadedModel,
    before: BeforeTraining,
    global_step: int,
    outcome: TrainingOutcome | None = None,
) -> partial[RunSummary]:
    """What the summary says however the run ends; each ending adds its fields, builds it
    once."""
    config, data = run.config, run.data
    return partial(
        RunSummary,
        status=outcome.status if outcome else "stopped",
        preset=config.preset,
        model=config.model,
        data=data.origin,
        data_revision=data.revision,
        train_pairs=len(data.train),
        validation_pairs=len(data.validation),
        test_pairs=len(data.test),
        cleaning=data.cleaning.record(),
        bleu_tokenize=config.bleu_tokenize,
        decoding=before.held_out.options,
        precision=run.precision,
        before=before.scores,
        baseline=before.baseline,
        train_seconds=round(outcome.seconds, 1) if outcome else None,
        global_step=global_step,
        run_dir=str(run.run_dir),
        base_model=loaded.base_model,
    )
