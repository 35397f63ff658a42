"""One fine-tuning run, start to finish: the function every front end calls.

``run_training`` reads as the job does: data, model, the held-out sets scored *before*,
fine-tuning with ``Seq2SeqTrainer``, the same sets scored *after* with the same decoding,
the best model published, the first sample's attention kept for the report
(:mod:`workbench.core.attention.kept_heatmaps`), the summary written. The details live in
their own modules: ``run_start`` (the run folder and its first lines), ``preflight``,
``run_model``, ``recipe``, ``trainer``, ``training_loop`` and ``callbacks`` (what the
Trainer is given, the Trainer, its loop and its callback), ``checkpoints``, and
:mod:`workbench.core.evaluate.before_after` (the held-out sets before and after).

Progress goes to an event sink and the run folder's ``train.log``; a ``threading.Event``
(or a stop request left in the folder) stops training at the next step with a
checkpoint; a lost ``RunLease`` (a sweep's trial taken for dead) stops it at the next
step with nothing more written (:class:`~workbench.core.run_folder.LeaseLost`, raised at
one check and caught once), and the run returns ``lost``. The run holds its folder for
its whole life (``core/live/writer.py``).
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from workbench.core.attention.kept_heatmaps import keep_sample_heatmap, sample_heatmap
from workbench.core.config.run_config import RunConfig
from workbench.core.data.hub_requests import reporting_retries
from workbench.core.data.prepared import prepare_data
from workbench.core.evaluate.before_after import (
    HeldOutSets,
    pick_samples,
    score_after,
    score_before,
    score_rows,
    translate_after,
    translate_before,
    write_translations,
)
from workbench.core.evaluate.breakdown import gain_breakdown
from workbench.core.evaluate.comet_sets import add_comet
from workbench.core.events import (
    EventSink,
    JsonlRecorder,
    Note,
    Phase,
    RunDone,
    fan_out,
    while_held,
)
from workbench.core.live.run_log import RunLog
from workbench.core.live.writer import RunWriter
from workbench.core.model.load import pick_device
from workbench.core.records.run_records import BaselineRecord, BleuChrf
from workbench.core.records.status import RunOutcome
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder import (
    BEST_MODEL,
    METRICS_FILE,
    RUN_CONFIG_FILE,
    LeaseLost,
    RunLease,
    check_lease,
    check_writable,
    saved_config,
)
from workbench.core.train import distributed
from workbench.core.train.averaging import average_checkpoints
from workbench.core.train.checkpoints import (
    keep_best_so_far,
    last_complete_checkpoint,
    publish_model,
    run_to_resume,
    save_best_model,
)
from workbench.core.train.early_stop import report_early_stopping
from workbench.core.train.lora import trainable_line, with_adapters
from workbench.core.train.memory.plan import check_fits, plan_memory, plan_scorer
from workbench.core.train.preflight import preflight
from workbench.core.train.run_model import (
    check_run_model,
    configure_generation,
    keep_initial_model,
    load_run_model,
    model_settings,
    resolve_precision,
    run_model_config,
)
from workbench.core.train.run_start import model_line, new_run, run_lines
from workbench.core.translate.translator import Translator
from workbench.core.views.memory_text import plan_lines

if TYPE_CHECKING:  # trainer imports torch at its top: run_training imports it once it trains
    from workbench.core.train.trainer import WorkbenchTrainer
    from workbench.core.train.training_loop import TrainingOutcome


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
    says how the run ended -- also when it ends by an exception. See :func:`_train` for
    the rest.
    """
    stop = stop or threading.Event()
    writer = RunWriter(stop)
    try:
        result = _train(config, on_event, stop, resume, run_dir, publish, lease, writer)
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


def _train(
    config: RunConfig,
    on_event: EventSink | None,
    stop: threading.Event,
    resume: bool,
    run_dir: Path | None,
    publish: bool,
    lease: RunLease | None,
    writer: RunWriter,
) -> RunResult:
    """The run itself, once :func:`run_training` has set up its writer.

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
    output_root = Path(config.output_dir).expanduser()
    published = output_root / BEST_MODEL  # where publishing copies the run's best model
    check_writable(output_root)
    main = distributed.is_main()
    log = RunLog() if main else None  # the run's lines in its folder, whoever watches
    # One set of lines and files: rank 0's.
    on_event = fan_out(on_event, log) if main else None
    writer.on_event = on_event
    # Rank 0 holds the run folder: the other ranks find it held, by their own job.
    resume_dir = run_to_resume(output_root, refuse_live=main) if resume else None
    if run_dir is not None and (run_dir / RUN_CONFIG_FILE).is_file():
        resume_dir = run_dir
    held = resume_dir or run_dir
    if main and held is not None:  # taken before minutes of set-up
        writer.hold(held, log)
    if resume_dir is not None:
        config = saved_config(resume_dir, config.preset)
    preflight(config)
    distributed.configure(config.ddp_timeout)  # before the first collective creates the group

    # ---- languages, label and lengths (tokenizer and config only), then the data
    with distributed.main_first(), reporting_retries(on_event):
        count_tokens = check_run_model(config)
        # The device, its arithmetic and the memory plan: from the model's config alone.
        shape = run_model_config(config)
        precision = resolve_precision(config, pick_device(), shape)
        plan = plan_memory(config, shape, precision)
        scorer = plan_scorer(config, plan)  # --comet's model
    check_fits(plan, config.model)
    fan_out(on_event)(Phase("data", config.data))
    # rank 0 fills the sample cache; the others read it
    with distributed.main_first(), reporting_retries(on_event):
        data = prepare_data(config, on_event=on_event, count_tokens=count_tokens)
    if data.revision and config.data_revision != data.revision:
        # Pinned in config.json: a resume, or a rerun with this config, reads the same rows.
        config = dataclasses.replace(config, data_revision=data.revision)

    # The training modules, once every check has passed and the data is ready.
    from transformers import set_seed

    from workbench.core.model.load import quiet_libraries
    from workbench.core.train.callbacks import EventCallback
    from workbench.core.train.recipe import build_trainer, tensorboard_callback
    from workbench.core.train.training_loop import evaluation_history, fine_tune

    quiet_libraries()
    device = precision.device
    run_dir = resume_dir or new_run(output_root, config, precision, main, run_dir, data)
    if main:
        writer.hold(run_dir, log)
        writer.began = True  # from here on, the run writes its folder
    recorder = JsonlRecorder(run_dir / METRICS_FILE) if main else None
    emit = fan_out(while_held(recorder, lease) if recorder else None, on_event)
    checkpoint: Path | None = None
    if resume_dir is not None:
        checkpoint = last_complete_checkpoint(run_dir, emit)
        emit(Note(f"resuming {run_dir.name} from {checkpoint.name if checkpoint else 'start'}"))
    for line in [*run_lines(run_dir, data, config), *plan_lines(plan, scorer)]:
        emit(Note(line))
    for line in data.notes:
        emit(Note(line, "warning"))
    set_seed(config.seed)

    # ---- model
    check_lease(lease, run_dir)
    emit(Phase("model", config.model))
    with distributed.main_first(), reporting_retries(emit):
        model, tokenizer, direction = load_run_model(config, data, run_dir, emit)
    configure_generation(model, config)
    model.to(device)
    emit(Note(model_line(model, precision)))
    emit(Note(f"languages: {direction.describe()}"))
    settings = model_settings(config, direction, run_dir)
    check_lease(lease, run_dir)
    base_model = keep_initial_model(model, tokenizer, config, direction, run_dir)

    # ---- before: once, by rank 0, with the plain fp32 model the Trainer has not wrapped yet
    held_out = HeldOutSets.of(data, config)
    before: dict[str, list[str]] = {}
    before_scores: dict[str, BleuChrf] = {}
    baseline: BaselineRecord | None = None  # the test set's published score, where there is one
    if main:
        translator = Translator(model, tokenizer, direction, config.max_source_length)
        before = translate_before(held_out, translator, run_dir, emit)
        before_scores, baseline = score_before(held_out, before, emit, translator)
    distributed.barrier()

    # ---- train
    check_lease(lease, run_dir)
    if config.lora:  # after "before", which the plain model decoded
        model = with_adapters(model, config)
        emit(Note(trainable_line(model)))
    emit(Phase("train"))
    callback = EventCallback(emit, stop, config.batch_size, lease)
    trainer = build_trainer(
        config,
        model,
        tokenizer,
        data.train,
        data.validation,
        run_dir,
        precision,
        [callback],
        direction=direction,
        lease=lease,
    )
    if config.report_to == "tensorboard" and main:
        trainer.add_callback(tensorboard_callback(run_dir / "tensorboard"))
    outcome = fine_tune(trainer, callback, checkpoint, run_dir)
    if outcome.lease_lost:
        raise LeaseLost(run_dir, trainer.state.global_step)
    if not main:  # rank 0 writes the outputs; the others are done
        return RunResult(outcome.status, run_dir, RunSummary())
    # What the summary says however the run ends; each ending adds its fields, builds it once.
    summary_with = partial(
        RunSummary,
        status=outcome.status,
        preset=config.preset,
        model=config.model,
        data=data.origin,
        data_revision=data.revision,
        train_pairs=len(data.train),
        validation_pairs=len(data.validation),
        test_pairs=len(data.test),
        cleaning=data.cleaning.record(),
        bleu_tokenize=config.bleu_tokenize,
        decoding=held_out.options,
        precision=precision,
        before=before_scores,
        baseline=baseline,
        train_seconds=round(outcome.seconds, 1),
        global_step=trainer.state.global_step,
        run_dir=str(run_dir),
        base_model=base_model,
    )
    if outcome.status != "finished":
        check_lease(lease, run_dir, trainer.state.global_step)
        return _end_early(emit, trainer, outcome, summary_with, settings, run_dir, published)

    stopping = report_early_stopping(trainer, config, emit)

    # ---- after: the best model as saved (or the average, if better), the same decoding
    best_dir = run_dir / BEST_MODEL
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
    samples = pick_samples(rows["test"], config.num_samples_shown)
    for sample in samples:
        emit(sample)
    heatmap = sample_heatmap(best_dir, samples)  # the report's, drawn without torch

    # ---- publish (the run's last writes, the lease checked once more: decoding takes long)
    check_lease(lease, run_dir, trainer.state.global_step)
    if publish:
        publish_model(best_dir, published)
    write_translations(run_dir, rows)
    keep_sample_heatmap(run_dir, best_dir, heatmap)
    summary = summary_with(
        test=scores["test"],
        validation=scores["validation"],
        distinct_after=round(len(set(after["test"])) / max(1, len(after["test"])), 4),
        best_checkpoint=trainer.state.best_model_checkpoint,
        best_model=str(published if publish else best_dir),
        run_best_model=str(best_dir),
        samples=list(samples),
        epochs=evaluation_history(trainer),
        early_stopping=stopping,
        averaging=averaging.record,
        **gain_breakdown(rows["test"], config.bleu_tokenize, config.source_lang),
    )
    summary.write(run_dir)
    emit(RunDone("finished", str(run_dir), summary))
    return RunResult("finished", run_dir, summary)


# --------------------------------------------------------------------------- the steps' details


def _end_early(
    emit: EventSink,
    trainer: WorkbenchTrainer,
    outcome: TrainingOutcome,
    summary_with: partial[RunSummary],
    settings: dict[str, Any],
    run_dir: Path,
    published: Path,
) -> RunResult:
    """A stopped or failed run: its summary, how to go on, and after a NaN loss the best
    model so far (the weights in memory may be broken; the best checkpoint is not)."""
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
                f"{published} was left as it was",
                "warning",
            )
        )
    summary = summary_with(error=error, run_best_model=str(kept) if kept else None)
    summary.write(run_dir)
    if outcome.stopped_by_user:
        emit(
            Note(
                f"stopped at step {trainer.state.global_step} with a checkpoint; "
                "continue with: workbench train --resume"
            )
        )
    emit(RunDone(outcome.status, str(run_dir), summary))
    return RunResult(outcome.status, run_dir, summary)
