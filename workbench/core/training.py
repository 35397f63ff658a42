"""One fine-tuning run, start to finish: the function every front end calls.

``run_training`` reads as the job does: prepare the run folder, load data, load or build
the model, score the validation set *before*, fine-tune with ``Seq2SeqTrainer``, score it
*after* with the same decoding, save the best model, write the summary. Progress goes to
an event sink; a ``threading.Event`` stops training at the next step with a checkpoint.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core import distributed, token_loss
from workbench.core.atomic import write_json
from workbench.core.checkpoints import (
    find_resumable_run,
    keep_best_so_far,
    last_complete_checkpoint,
    move_staged_checkpoint,
    publish_model,
    save_best_model,
    staging_folder,
)
from workbench.core.config import RunConfig
from workbench.core.data import Pair, SplitData, prepare_data
from workbench.core.events import (
    EvalDone,
    EventSink,
    JsonlRecorder,
    Note,
    Phase,
    RunDone,
    Sample,
    TrainStep,
    fan_out,
    finite_or_none,
)
from workbench.core.metrics import corpus_bleu, corpus_chrf, make_compute_metrics, sentence_bleu
from workbench.core.preflight import preflight
from workbench.core.preprocess import tokenize_pairs
from workbench.core.runs import (
    BEST_MODEL,
    INITIAL_MODEL,
    RUNS_FOLDER,
    check_writable,
    new_run_dir,
    read_json_dict,
    saved_config,
)
from workbench.core.scores import score_before_after
from workbench.core.translation import SETTINGS_FILE, DecodeOptions, Translator
from workbench.errors import WorkbenchError


@dataclass
class RunResult:
    """What a run left behind."""

    status: str
    run_dir: Path
    summary: dict[str, Any]


# --------------------------------------------------------------------------- the trainer hook


def _make_callback(emit: EventSink, stop: threading.Event, batch_size: int) -> Any:
    """A TrainerCallback turning logs into events and the stop flag into a clean stop.

    Defined inside a function so that importing this module does not import transformers.
    """
    from transformers import TrainerCallback

    class EventCallback(TrainerCallback):
        def __init__(self) -> None:
            self.started = time.perf_counter()
            self.start_step = 0
            self.stopped_by_user = False
            self.nan_step: int | None = None

        def on_train_begin(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            self.started = time.perf_counter()
            self.start_step = state.global_step

        def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            # Every rank must stop at the same step, or one waits forever for the others.
            if distributed.any_rank(stop.is_set(), args.device) and not self.stopped_by_user:
                self.stopped_by_user = True
                control.should_training_stop = True
                control.should_save = True
            return control

        def on_epoch_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            # A stop mid-epoch already saved its checkpoint at the step; the epoch-end
            # evaluation would score a partial epoch (and could become the "best" model,
            # which a resumed run would never pick), and a NaN model is not worth a save.
            if self.stopped_by_user or self.nan_step is not None:
                control.should_evaluate = False
                control.should_save = False
            return control

        def on_log(self, args, state, control, logs=None, **kwargs):  # type: ignore[no-untyped-def]
            logs = logs or {}
            step = state.global_step
            if "loss" in logs:
                loss = finite_or_none(logs["loss"])
                if loss is None and self.nan_step is None:
                    self.nan_step = step
                    emit(Note(f"loss became {logs['loss']} at step {step}; stopping the run "
                              "and keeping the best model so far (try a lower --lr)", "error"))
                    control.should_training_stop = True
                elapsed = time.perf_counter() - self.started
                done = max(1, step - self.start_step)
                per_step = elapsed / done
                emit(TrainStep(
                    step=step,
                    max_steps=state.max_steps,
                    epoch=round(float(state.epoch or 0.0), 4),
                    loss=loss,
                    learning_rate=finite_or_none(logs.get("learning_rate")),
                    grad_norm=finite_or_none(logs.get("grad_norm")),
                    samples_per_second=round(batch_size * args.world_size / per_step, 2),
                    eta_seconds=round(per_step * max(0, state.max_steps - step), 1),
                ))
            if "eval_bleu" in logs:
                emit(EvalDone(
                    step=step,
                    epoch=round(float(state.epoch or 0.0), 4),
                    bleu=float(logs["eval_bleu"]),
                    chrf=float(logs.get("eval_chrf", 0.0)),
                    loss=finite_or_none(logs.get("eval_loss")),
                ))
            return control

    return EventCallback()


# --------------------------------------------------------------------------- the run


def _trainer_class(seed: int) -> Any:
    """Seq2SeqTrainer made resumable bit for bit, with checkpoints that appear whole.

    - **Batch order.** transformers' LengthGroupedSampler draws its order from the global
      torch RNG when the epoch starts; on a mid-epoch resume that draw happens *after* the
      checkpoint's RNG state is restored, so the rest of the epoch would see another order.
      A generator seeded with ``seed + epoch`` gives every epoch the same order however
      the run got there.
    - **No evaluation at a stop.** See the callback's ``on_epoch_end``: an evaluation of
      the partial epoch would also draw from the RNG and could become the "best" model.
      With both, a resumed run equals an uninterrupted one bit for bit on CPU (tested).
      Reseeding the RNG before every step also made resume exact, but the demo then
      learned far worse (training loss 3.58 instead of 2.58 at step 840, measured
      2026-11-29), so it is not done.
    - **Checkpoints.** transformers writes ``checkpoint-N/`` in place, so a kill or a full
      disk mid-save leaves a folder that looks like a checkpoint and is not. Here the
      Trainer writes into a hidden staging folder; the files are flushed and the finished
      folder is renamed into place (rank 0 only, after every rank has written).
    """
    import torch
    from torch.utils.data import SequentialSampler
    from transformers import Seq2SeqTrainer
    from transformers.trainer_pt_utils import LengthGroupedSampler
    from transformers.trainer_utils import rotate_checkpoints

    class EpochSeededLengthSampler(LengthGroupedSampler):
        def set_epoch(self, epoch: int) -> None:
            self.generator = torch.Generator().manual_seed(seed + int(epoch))

    class WorkbenchTrainer(Seq2SeqTrainer):
        def _get_train_sampler(self, train_dataset: Any = None) -> Any:
            dataset = train_dataset if train_dataset is not None else self.train_dataset
            # Grouped by the *global* batch: accelerate deals consecutive per-device
            # batches to the ranks, so N processes see the batches one process would.
            # Keyed by the source length. Keying by the longer side of each pair pads
            # WMT-like targets less (benchmarks/RESULTS.md), but on the demo it slowed
            # learning (training loss 5.16 instead of 4.92 at step 240, the rest of the
            # run unchanged; measured 2026-11-29), so it is not used.
            sampler = EpochSeededLengthSampler(
                self.args.train_batch_size * self.args.gradient_accumulation_steps
                * self.args.world_size,
                dataset=dataset,
                lengths=[len(ids) for ids in dataset["input_ids"]],
            )
            sampler.set_epoch(0)
            return sampler

        def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                         num_items_in_batch: Any = None) -> Any:
            # The vocabulary projection on real target tokens only (token_loss). Not under
            # DataParallel (several GPUs in one process), which splits the batch the
            # gathering mask describes.
            unwrapped = self.accelerator.unwrap_model(model)
            if (return_outputs or not model.training or "labels" not in inputs
                    or self.args.n_gpu > 1 or self.compute_loss_func is not None
                    or not token_loss.supports(unwrapped)):
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            loss = token_loss.real_token_loss(model, unwrapped, inputs, num_items_in_batch,
                                              self.args.label_smoothing_factor)
            if (self.args.average_tokens_across_devices and self.model_accepts_loss_kwargs
                    and num_items_in_batch is not None):
                # As Trainer.compute_loss: DDP averages gradients over processes, while
                # num_items_in_batch already counts the global batch.
                loss = loss * (self.accelerator.num_processes // self.get_tp_size())
            return loss

        def _get_eval_sampler(self, eval_dataset: Any) -> Any:
            # transformers 5 length-groups (and shuffles) evaluation too when training is
            # length-grouped; BLEU is scored against the references in dataset order
            # (run_training sorts that dataset, longest_first, with its references).
            return SequentialSampler(eval_dataset)

        def _save_checkpoint(self, model: Any, trial: Any) -> None:
            root = Path(self.args.output_dir)
            name = f"checkpoint-{self.state.global_step}"
            staging_root = staging_folder(root, name)
            if self.is_world_process_zero():
                shutil.rmtree(staging_root, ignore_errors=True)
            self.accelerator.wait_for_everyone()
            self.args.output_dir = str(staging_root)
            try:
                super()._save_checkpoint(model, trial)
            except BaseException:
                if self.is_world_process_zero():  # a full disk: give the space back
                    shutil.rmtree(staging_root, ignore_errors=True)
                raise
            finally:
                self.args.output_dir = str(root)
            best = self.state.best_model_checkpoint
            if best and Path(best).parent == staging_root:
                self.state.best_model_checkpoint = str(root / Path(best).name)
            self.accelerator.wait_for_everyone()
            if self.is_world_process_zero():
                # trainer_state.json names the best checkpoint: point it at the real place.
                self.state.save_to_json(str(staging_root / name / "trainer_state.json"))
                move_staged_checkpoint(staging_root, name)
                rotate_checkpoints(str(root), self.args.save_total_limit,
                                   self.state.best_model_checkpoint, use_mtime=True)
            self.accelerator.wait_for_everyone()

    return WorkbenchTrainer


def longest_first(dataset: Any, references: list[str]) -> tuple[Any, list[str]]:
    """The evaluation set longest source first, its references kept in the same order.

    Seq2SeqTrainer generates batch by batch, and a batch decodes until its longest
    sentence ends: in dataset order a batch of 16 WMT-length sentences runs to about the
    94th-percentile length. Sorted, the sentences of a batch end close together and
    padding shrinks too (benchmarks/RESULTS.md). Longest first, so memory runs out at
    once if it will. Corpus BLEU and chrF do not depend on the order of the pairs.
    """
    lengths = [len(ids) for ids in dataset["input_ids"]]
    order = sorted(range(len(lengths)), key=lengths.__getitem__, reverse=True)  # stable
    return dataset.select(order), [references[i] for i in order]


def build_trainer(config: RunConfig, model: Any, tokenizer: Any, train: list[Pair],
                  validation: list[Pair], run_dir: Path, device: str,
                  callbacks: list[Any] | None = None) -> Any:
    """The Trainer ``workbench train`` runs, over tokenized pairs; checkpoints in run_dir.

    One place for the recipe (tokenizing, batching, collating, metrics), so that
    benchmarks/speed.py times exactly what users run.
    """
    from transformers import DataCollatorForSeq2Seq
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    def tokenized(pairs: list[Pair]) -> Any:
        return tokenize_pairs(pairs, tokenizer, config.target_label,
                              config.max_source_length, config.max_target_length)

    val_set, references = longest_first(tokenized(validation), [p.target for p in validation])
    trainer = _trainer_class(config.seed)(
        model=model,
        args=_training_arguments(config, run_dir, device),
        train_dataset=tokenized(train),
        eval_dataset=val_set,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100),
        processing_class=tokenizer,
        compute_metrics=make_compute_metrics(tokenizer, config.bleu_tokenize, references),
        callbacks=callbacks,
    )
    # Our events replace the Trainer's own dict printing and tqdm bars.
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    return trainer


def _load_model(config: RunConfig, data: SplitData, run_dir: Path, emit: EventSink) -> Any:
    from workbench.core.modeling import check_target_label, load_model_and_tokenizer

    if config.is_scratch:
        from workbench.core.scratch_model import build_scratch_model

        emit(Note(f"building a {config.scratch_layers}+{config.scratch_layers}-layer MarianMT "
                  f"(d_model {config.scratch_d_model}) and SentencePiece vocabularies from "
                  "the training split"))
        model, tokenizer = build_scratch_model(
            [p.source for p in data.train], [p.target for p in data.train],
            run_dir / "scratch_tokenizer", config, reuse=not distributed.is_main(),
        )
        sizes = (tokenizer.spm_source.get_piece_size(), tokenizer.spm_target.get_piece_size())
        if sizes[0] < config.scratch_source_vocab or sizes[1] < config.scratch_target_vocab:
            emit(Note(f"vocabularies of {sizes[0]:,} source / {sizes[1]:,} target pieces "
                      f"(asked for {config.scratch_source_vocab:,} / "
                      f"{config.scratch_target_vocab:,}): the {len(data.train):,} training "
                      "pairs support no more"))
        return model, tokenizer
    model, tokenizer = load_model_and_tokenizer(config.model)
    check_target_label(tokenizer, config.target_label)
    return model, tokenizer


def model_settings(config: RunConfig, run_dir: Path) -> dict[str, Any]:
    """What a saved model needs besides its weights: label and limits (workbench.json)."""
    return {
        "target_label": config.target_label,
        "source_lang": config.source_lang,
        "target_lang": config.target_lang,
        "max_source_length": config.max_source_length,
        "bleu_tokenize": config.bleu_tokenize,
        "run_dir": str(run_dir),
    }


def _configure_generation(model: Any, config: RunConfig) -> None:
    """Bound generation everywhere: the model default is 512 tokens and 4+ beams."""
    gen = model.generation_config
    # Only max_length (decoder start + new tokens): setting max_new_tokens as well makes
    # generate() warn on every batch.
    gen.max_length = config.max_new_tokens + 1
    gen.max_new_tokens = None
    gen.num_beams = config.num_beams
    gen.no_repeat_ngram_size = config.no_repeat_ngram_size or None


def _score(hyps: list[str], refs: list[str], config: RunConfig) -> tuple[float, float]:
    return corpus_bleu(hyps, refs, config.bleu_tokenize), corpus_chrf(hyps, refs)


def _score_rows(
    val: list[Pair], before: list[str], after: list[str], config: RunConfig
) -> list[Sample]:
    """Every sentence of a set with its before/after translation and sentence BLEU.

    Scored once here and written to ``<set>_translations.jsonl``, so the TUI's Samples
    pane only reads them.
    """
    return [
        Sample(
            source=pair.source,
            reference=pair.target,
            before=b,
            after=a,
            bleu_before=round(sentence_bleu(b, pair.target, config.bleu_tokenize), 2),
            bleu_after=round(sentence_bleu(a, pair.target, config.bleu_tokenize), 2),
        )
        for pair, b, a in zip(val, before, after, strict=True)
    ]


def sources_fingerprint(pairs: list[Pair]) -> str:
    """A hash of a set's source sentences, in order (before.json is reused only for them)."""
    import hashlib

    return hashlib.sha256("\n".join(p.source for p in pairs).encode("utf-8")).hexdigest()


def _pick_samples(rows: list[Sample], k: int) -> list[Sample]:
    """k evenly spread sentences (deterministic, not cherry-picked)."""
    if not rows or k <= 0:
        return []
    return rows[:: max(1, len(rows) // k)][:k]


def resolve_precision(config: RunConfig, device: str) -> dict[str, Any]:
    """How training computes and how before/after are decoded (config.json, summary.json).

    Mixed precision is for training only: before and after are both decoded in fp32
    with TF32 off (:func:`~workbench.core.modeling.fp32_decoding`), so that the two sides
    of the comparison, and the console, run the same arithmetic.
    """
    from workbench.core.modeling import bf16_supported

    bf16 = config.bf16 if config.bf16 is not None else (not config.fp16 and bf16_supported())
    if config.fp16 and device != "cuda":
        raise WorkbenchError("--fp16 needs a CUDA GPU and none is visible; drop the flag "
                             "(--bf16 also works on the CPU)")
    if bf16 and device not in ("cuda", "cpu"):
        raise WorkbenchError(f"--bf16 is supported on CUDA GPUs and the CPU, not on {device}; "
                             "drop the flag")
    return {
        "device": device,
        "training": "fp16" if config.fp16 else "bf16" if bf16 else "fp32",
        # TF32 matmuls for what still runs in fp32, on the GPUs that have bf16 (Ampere+).
        "training_tf32": device == "cuda" and bf16_supported(),
        "decoding": "fp32, TF32 off",
    }


def _training_arguments(config: RunConfig, run_dir: Path, device: str) -> Any:
    from transformers import Seq2SeqTrainingArguments

    precision = resolve_precision(config, device)
    return Seq2SeqTrainingArguments(
        output_dir=str(run_dir / "checkpoints"),
        per_device_train_batch_size=config.batch_size,
        per_device_eval_batch_size=config.eval_batch_size,
        learning_rate=config.learning_rate,
        num_train_epochs=config.epochs,
        warmup_steps=config.warmup_ratio,  # a float < 1 is a ratio in transformers 5
        lr_scheduler_type=config.lr_scheduler,
        weight_decay=config.weight_decay,
        label_smoothing_factor=config.label_smoothing,
        eval_strategy="epoch",
        save_strategy="epoch",
        save_total_limit=2,
        load_best_model_at_end=True,
        metric_for_best_model="bleu",
        greater_is_better=True,
        predict_with_generate=True,
        generation_max_length=config.max_new_tokens + 1,
        generation_num_beams=config.eval_num_beams,
        logging_strategy="steps",
        logging_steps=config.logging_steps,
        logging_first_step=True,
        logging_nan_inf_filter=False,  # a NaN must be seen, not logged as 0.0
        train_sampling_strategy="group_by_length",
        seed=config.seed,
        data_seed=config.seed,
        fp16=precision["training"] == "fp16",
        bf16=precision["training"] == "bf16",
        tf32=True if precision["training_tf32"] else None,
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
        ddp_find_unused_parameters=False,  # every parameter is used: skip the extra graph walk
        ddp_timeout=config.ddp_timeout,
        use_cpu=device == "cpu",
    )


def tensorboard_callback(folder: Path) -> Any:
    """transformers' TensorBoard callback, writing event files into the run folder."""
    from transformers.integrations import TensorBoardCallback

    callback = TensorBoardCallback()
    callback.logging_dir = str(folder)  # default: under checkpoints/, named by date and host
    return callback


def run_training(
    config: RunConfig,
    on_event: EventSink | None = None,
    stop: threading.Event | None = None,
    resume: bool = False,
) -> RunResult:
    """Fine-tune as configured and return the run's status, folder and summary.

    Everything a user can get wrong (Hub access, paths, data files, output folder) is
    checked before the run folder is created, so a mistake leaves nothing behind.
    """
    stop = stop or threading.Event()
    output_root = Path(config.output_dir).expanduser()
    check_writable(output_root)
    resume_dir: Path | None = None
    if resume:
        resume_dir = find_resumable_run(output_root)
        if resume_dir is None:
            raise WorkbenchError(
                f"nothing to resume under '{output_root / RUNS_FOLDER}': no unfinished run "
                "with a complete checkpoint; start a new run without --resume"
            )
        config = saved_config(resume_dir, config.preset)
    preflight(config)
    distributed.configure(config.ddp_timeout)  # before the first collective creates the group
    main = distributed.is_main()
    if not main:  # one set of lines and files: rank 0's
        on_event = None
    early = fan_out(on_event)
    early(Phase("data", config.data))
    with distributed.main_first():  # rank 0 fills the sample cache; the others read it
        data = prepare_data(config)
    if data.revision and config.data_revision != data.revision:
        # Pinned in config.json: a resume, or a rerun with this config, reads the same rows.
        config = dataclasses.replace(config, data_revision=data.revision)

    from transformers import set_seed

    from workbench.core.modeling import fp32_decoding, pick_device, quiet_libraries

    quiet_libraries()
    device = pick_device()
    precision = resolve_precision(config, device)
    checkpoint: Path | None = None
    if resume_dir is not None:
        run_dir = resume_dir
    else:
        run_dir = distributed.from_main(new_run_dir(output_root, config.preset) if main else None)
        if main:
            write_json(run_dir / "config.json", {**config.to_dict(), "precision": precision})
    emit = fan_out(JsonlRecorder(run_dir / "metrics.jsonl") if main else None, on_event)
    if resume_dir is not None:
        checkpoint = last_complete_checkpoint(run_dir, emit)
        emit(Note(f"resuming {run_dir.name} from {checkpoint.name if checkpoint else 'start'}"))
    emit(Note(f"run folder: {run_dir}"))
    dropped = ", ".join(f"{v} {k}" for k, v in data.dropped.items() if v) or "nothing"
    emit(Note(f"data: {len(data.train)} train / {len(data.validation)} validation "
              f"({data.validation_name}) from {data.origin} (dropped {dropped})"))
    emit(Note(f"test set: {len(data.test)} pairs ({data.test_name}), scored before and "
              "after fine-tuning only, never used to choose anything"))
    set_seed(config.seed)

    world = distributed.world_size()
    emit(Note(f"effective batch size {config.batch_size * world}"
              + (f" ({config.batch_size} per process x {world} processes)" if world > 1 else "")))
    if world > 1:
        waits = distributed.process_group_timeout()
        emit(Note(f"processes wait up to {waits:.0f} s for each other (ddp_timeout)"
                  if waits is not None else f"ddp_timeout {config.ddp_timeout} s"))
    emit(Phase("model", config.model))
    with distributed.main_first():
        model, tokenizer = _load_model(config, data, run_dir, emit)
    _configure_generation(model, config)
    model.to(device)
    n_params = sum(p.numel() for p in model.parameters())
    emit(Note(f"model: {type(model).__name__}, {n_params / 1e6:.1f}M parameters, on {device}; "
              f"training in {precision['training']}, before/after decoded in "
              f"{precision['decoding']}"))

    base_model = config.model
    if config.is_scratch:  # keep the untrained model: the "before" side in the TUI console
        base_dir = run_dir / INITIAL_MODEL
        if main and not base_dir.exists():
            model.save_pretrained(base_dir)
            tokenizer.save_pretrained(base_dir)
            write_json(base_dir / SETTINGS_FILE, model_settings(config, run_dir))
        base_model = str(base_dir)

    sets = {"validation": data.validation, "test": data.test}
    set_names = {"validation": data.validation_name, "test": data.test_name}
    options = DecodeOptions(config.num_beams, config.max_new_tokens, config.no_repeat_ngram_size)
    translator = Translator(model, tokenizer, config.target_label, config.max_source_length)

    def score_event(stage: str, split: str, hyps: list[str], step: int,
                    epoch: float) -> dict[str, float]:
        bleu, chrf = _score(hyps, [p.target for p in sets[split]], config)
        emit(EvalDone(step=step, epoch=epoch, bleu=bleu, chrf=chrf, stage=stage, split=split,
                      set_name=set_names[split], size=len(sets[split])))
        return {"bleu": round(bleu, 2), "chrf": round(chrf, 2)}

    # Before and after are scored once, by rank 0, on both held-out sets; the plain fp32
    # model here is the one the Trainer has not wrapped yet.
    before_file = run_dir / "before.json"
    before: dict[str, list[str]] = {}
    before_scores: dict[str, dict[str, float]] = {}
    if main:
        saved_before = read_json_dict(before_file) or {}
        fingerprints = {split: sources_fingerprint(pairs) for split, pairs in sets.items()}
        for split, pairs in sets.items():
            done = saved_before.get(split)
            # Reused on resume only for the very same sentences (a data file may have changed).
            if (isinstance(done, list) and len(done) == len(pairs)
                    and (saved_before.get("sources") or {}).get(split) == fingerprints[split]):
                before[split] = done
                continue
            emit(Phase("before", f"translating {len(pairs)} {split} sentences"))
            with fp32_decoding():
                before[split] = translator.translate_many([p.source for p in pairs], options,
                                                          config.eval_batch_size)
        write_json(before_file, {**before, "sources": fingerprints})
        for split in sets:
            before_scores[split] = score_event("before", split, before[split], 0, 0.0)
    distributed.barrier()

    emit(Phase("train"))
    callback = _make_callback(emit, stop, config.batch_size)
    trainer = build_trainer(config, model, tokenizer, data.train, data.validation, run_dir,
                            device, [callback])
    if config.report_to == "tensorboard" and main:
        trainer.add_callback(tensorboard_callback(run_dir / "tensorboard"))
    started = time.perf_counter()
    try:
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    except OSError as err:
        # A full disk or a folder gone read-only while saving: the checkpoint being
        # written was staged, so the last complete one is still there to resume from.
        raise WorkbenchError(
            f"could not write to '{run_dir}' at step {trainer.state.global_step} "
            f"({err.strerror or err}); free some space, then continue with: "
            "workbench train --resume"
        ) from None
    train_seconds = time.perf_counter() - started

    summary: dict[str, Any] = {
        "preset": config.preset,
        "model": config.model,
        "data": data.origin,
        "data_revision": data.revision,
        "train_pairs": len(data.train),
        "validation_pairs": len(data.validation),
        "test_pairs": len(data.test),
        "bleu_tokenize": config.bleu_tokenize,
        "decoding": vars(options),
        "precision": precision,
        "before": before_scores,
        "train_seconds": round(train_seconds, 1),
        "global_step": trainer.state.global_step,
        "run_dir": str(run_dir),
        "base_model": base_model,
    }
    if callback.stopped_by_user or callback.nan_step is not None:
        status = "stopped" if callback.nan_step is None else "failed"
    else:
        status = "finished"
    if not main:  # rank 0 writes the outputs; the others are done
        return RunResult(status, run_dir, {})
    if status != "finished":
        if callback.nan_step is not None:
            summary["error"] = f"non-finite loss at step {callback.nan_step}"
            kept = keep_best_so_far(trainer, run_dir, model_settings(config, run_dir))
            summary["run_best_model"] = str(kept) if kept else None
            emit(Note(f"best model so far kept in {kept}" if kept else
                      "no evaluation had finished yet, so there is no best model to keep; "
                      f"{output_root / BEST_MODEL} was left as it was", "warning"))
        summary["status"] = status
        write_json(run_dir / "summary.json", summary)
        if callback.stopped_by_user:
            emit(Note(f"stopped at step {trainer.state.global_step} with a checkpoint; "
                      "continue with: workbench train --resume"))
        emit(RunDone(status, str(run_dir), summary))
        return RunResult(status, run_dir, summary)

    best_dir = run_dir / BEST_MODEL
    save_best_model(trainer, best_dir, model_settings(config, run_dir))

    # "After" translates the model as saved, loaded as `workbench translate --model
    # <run>/best_model` loads it, not trainer.model: accelerate leaves that one wrapped in
    # bf16/fp16 autocast, so on a GPU it would decode at another precision than "before".
    after_translator = Translator.from_pretrained(str(best_dir), device=device,
                                                  backend="transformers")
    after: dict[str, list[str]] = {}
    for split, pairs in sets.items():
        emit(Phase("after", f"translating {len(pairs)} {split} sentences with {best_dir}"))
        with fp32_decoding():
            after[split] = after_translator.translate_many([p.source for p in pairs], options,
                                                           config.eval_batch_size)
    scores = {}
    for split, pairs in sets.items():
        # The paired test scores both sides itself: the after-event takes its numbers.
        scores[split] = score_before_after(before[split], after[split],
                                           [p.target for p in pairs], config.bleu_tokenize,
                                           split, set_names[split])
        emit(EvalDone(step=trainer.state.global_step, epoch=float(trainer.state.epoch or 0),
                      bleu=scores[split].bleu_after, chrf=scores[split].chrf_after,
                      stage="after", split=split, set_name=set_names[split], size=len(pairs)))

    rows = {split: _score_rows(pairs, before[split], after[split], config)
            for split, pairs in sets.items()}
    samples = _pick_samples(rows["test"], config.num_samples_shown)
    for sample in samples:
        emit(sample)

    published = output_root / BEST_MODEL
    publish_model(best_dir, published)

    for split in sets:
        with (run_dir / f"{split}_translations.jsonl").open("w", encoding="utf-8") as fh:
            for row in rows[split]:
                fh.write(json.dumps(vars(row), ensure_ascii=False) + "\n")
    summary.update({
        "status": "finished",
        # The headline is the test set: never used to choose the epoch or the recipe.
        "test": scores["test"].to_dict(),
        "validation": scores["validation"].to_dict(),
        "distinct_after": round(len(set(after["test"])) / max(1, len(after["test"])), 4),
        "best_checkpoint": trainer.state.best_model_checkpoint,
        "best_model": str(published),
        "run_best_model": str(best_dir),
        "samples": [vars(s) for s in samples],
        "epochs": [
            {k: v for k, v in log.items() if not (isinstance(v, float) and not math.isfinite(v))}
            for log in trainer.state.log_history if "eval_bleu" in log
        ],
    })
    write_json(run_dir / "summary.json", summary)
    emit(RunDone("finished", str(run_dir), summary))
    return RunResult("finished", run_dir, summary)
