"""The Seq2SeqTrainer ``workbench train`` runs: its arguments, batches, loss and
checkpoints (the callback that turns its logs into events is ``callbacks``).

This module imports torch and transformers at the top. Import it only inside functions
that train (``run_training`` does, after preflight), so that ``workbench --help`` and the
checks before a run stay quick and torch-free. ``benchmarks/speed.py`` builds its
workbench arm from here too, so it times exactly what users run.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import torch
from torch.utils.data import SequentialSampler
from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments
from transformers.trainer_callback import PrinterCallback, ProgressCallback
from transformers.trainer_pt_utils import LengthGroupedSampler
from transformers.trainer_utils import rotate_checkpoints

from workbench.core.config.run_config import RunConfig
from workbench.core.data.pair import Pair
from workbench.core.data.tokenize import PairTokenizer, training_set
from workbench.core.evaluate.metrics import make_compute_metrics
from workbench.core.languages import Direction
from workbench.core.live.lease import RunLease, holds
from workbench.core.records.run_records import EpochLog
from workbench.core.records.typed import record_of
from workbench.core.run_folder.layout import RunFolder
from workbench.core.train import loss as token_loss
from workbench.core.train.averaging import keep_for_averaging
from workbench.core.train.batches import DecoderInputsCollator, PromptCollator, prompted_generation
from workbench.core.train.callbacks import EventCallback, TrainingOutcome
from workbench.core.train.checkpoints import move_staged_checkpoint, staging_folder
from workbench.core.train.early_stop import early_stopping_callback
from workbench.core.train.run_model import Precision
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from datasets import Dataset

#: What an evaluation set's references are (a sentence, or its pair).
T = TypeVar("T")


class EpochSeededLengthSampler(LengthGroupedSampler):
    """Length-grouped batches in an order fixed by ``seed + epoch``.

    transformers' LengthGroupedSampler draws its order from the global torch RNG when the
    epoch starts; on a mid-epoch resume that draw happens *after* the checkpoint's RNG
    state is restored, so the rest of the epoch would see another order. A generator
    seeded per epoch gives every epoch the same order however the run got there.
    """

    def __init__(self, batch_size: int, dataset: Any, lengths: list[int], seed: int) -> None:
        super().__init__(batch_size, dataset=dataset, lengths=lengths)
        self.seed = seed
        self.set_epoch(0)

    def set_epoch(self, epoch: int) -> None:
        """Called by the Trainer as each epoch starts."""
        self.generator = torch.Generator().manual_seed(self.seed + int(epoch))


class WorkbenchTrainer(Seq2SeqTrainer):
    """Seq2SeqTrainer made resumable bit for bit, with checkpoints that appear whole.

    - **Batch order** comes from :class:`EpochSeededLengthSampler`, seeded with
      ``args.seed``.
    - **No evaluation at a stop** (:class:`EventCallback`): an evaluation of the partial
      epoch would also draw from the RNG and could become the "best" model. With both, a
      resumed run equals an uninterrupted one bit for bit on CPU (tested). Reseeding the
      RNG before every step also made resume exact, but the demo then learned far worse,
      so it is not done.
    - **Checkpoints.** transformers writes ``checkpoint-N/`` in place, so a kill or a full
      disk mid-save leaves a folder that looks like a checkpoint and is not. Here the
      Trainer writes into a hidden staging folder; the files are flushed and the finished
      folder is renamed into place (rank 0 only, after every rank has written).
    - **Checkpoints kept**: the last (to resume from) and the best, as
      ``save_total_limit=2`` keeps them; with ``averaging``, also the ones
      :func:`~workbench.core.train.averaging.keep_for_averaging` will average.
    - **One writer.** With a ``lease`` (a sweep's trial), a save starts and is renamed
      into place only while the lease is held: a worker taken for dead leaves the
      checkpoints to the worker that continues its run (the staging folder it was writing
      stays behind, hidden, for that worker's own save of the step to replace).
    """

    lease: RunLease | None = None  # build_trainer sets it
    train_lengths: list[int] | None = None  # the source lengths: build_trainer sets them
    averaging: tuple[int, str] | None = None  # (k, "best" or "last"): build_trainer sets it

    def _get_train_sampler(self, train_dataset: Any = None) -> Any:
        # A datasets.Dataset (build_trainer's tokenized pairs); Trainer annotates torch's.
        dataset: Dataset = train_dataset if train_dataset is not None else self.train_dataset
        # Grouped by the *global* batch: accelerate deals consecutive per-device batches to
        # the ranks, so N processes see the batches one process would. Keyed by the source
        # length: keying by the longer side of each pair would pad WMT-like targets less,
        # but on the demo it slowed learning, so it is not done.
        return EpochSeededLengthSampler(
            self.args.train_batch_size
            * self.args.gradient_accumulation_steps
            * self.args.world_size,
            dataset=dataset,
            lengths=self.train_lengths or [len(ids) for ids in dataset["input_ids"]],
            seed=self.args.seed,
        )

    def compute_loss(
        self,
        model: Any,
        inputs: dict[str, Any],
        return_outputs: bool = False,
        num_items_in_batch: Any = None,
    ) -> Any:
        """The vocabulary projection on real target tokens only (:mod:`token_loss`).

        Not under DataParallel (several GPUs in one process), which splits the batch the
        gathering mask describes.

        A training loss goes through :func:`token_loss.tied_to_trainable` (a LoRA step that
        LayerDrop left without any adapted layer).
        """
        unwrapped = token_loss.base_model(self.accelerator.unwrap_model(model))
        if return_outputs or not model.training:
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        if (
            "labels" not in inputs
            or self.args.n_gpu > 1
            or self.compute_loss_func is not None
            or not token_loss.supports(unwrapped)
        ):
            loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            return token_loss.tied_to_trainable(loss, model)
        loss = token_loss.real_token_loss(
            model, unwrapped, inputs, num_items_in_batch, self.args.label_smoothing_factor
        )
        if (
            self.args.average_tokens_across_devices
            and self.model_accepts_loss_kwargs
            and num_items_in_batch is not None
        ):
            # As Trainer.compute_loss: DDP averages gradients over processes, while
            # num_items_in_batch already counts the global batch.
            loss = loss * (self.accelerator.num_processes // self.get_tp_size())
        return token_loss.tied_to_trainable(loss, model)

    def prediction_step(
        self,
        model: Any,
        inputs: dict[str, Any],
        prediction_loss_only: bool,
        ignore_keys: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Seq2SeqTrainer's step; for a decoder-only model, the loss on the whole sequence
        and the translation generated from the prompt alone, by the backend every other
        translation of the workbench goes through."""
        unwrapped = token_loss.base_model(self.accelerator.unwrap_model(model))
        if prediction_loss_only or unwrapped.config.is_encoder_decoder:
            return super().prediction_step(
                model, inputs, prediction_loss_only, ignore_keys=ignore_keys, **kwargs
            )
        loss, _, _ = super().prediction_step(model, inputs, True, ignore_keys=ignore_keys)
        return loss, prompted_generation(model, inputs, self.args), inputs["labels"]

    def _get_eval_sampler(self, eval_dataset: Any) -> Any:
        # transformers 5 length-groups (and shuffles) evaluation too when training is
        # length-grouped; BLEU is scored against the references in dataset order
        # (build_trainer sorts that dataset, longest_first, with its references).
        return SequentialSampler(eval_dataset)

    def _save_checkpoint(self, model: Any, trial: Any) -> None:
        assert self.args.output_dir is not None  # build_trainer always sets it
        if not holds(self.lease):
            return
        root = Path(self.args.output_dir)
        name = f"checkpoint-{self.state.global_step}"
        staging = staging_folder(root, name)
        if self.is_world_process_zero():
            shutil.rmtree(staging, ignore_errors=True)
        self.accelerator.wait_for_everyone()
        self.args.output_dir = str(staging)
        try:
            super()._save_checkpoint(model, trial)
        except BaseException:
            if self.is_world_process_zero():  # a full disk: give the space back
                shutil.rmtree(staging, ignore_errors=True)
            raise
        finally:
            self.args.output_dir = str(root)
        best = self.state.best_model_checkpoint
        if best and Path(best).parent == staging:
            self.state.best_model_checkpoint = str(root / Path(best).name)
        self.accelerator.wait_for_everyone()
        if self.is_world_process_zero() and holds(self.lease):
            # trainer_state.json names the best checkpoint: point it at the real place.
            self.state.save_to_json(str(staging / name / "trainer_state.json"))
            move_staged_checkpoint(staging, name)
            if self.averaging is not None:  # the checkpoints to average are kept too
                keep_for_averaging(root, self.state, *self.averaging)
            else:
                rotate_checkpoints(
                    str(root),
                    self.args.save_total_limit,
                    self.state.best_model_checkpoint,
                    use_mtime=True,
                )
        self.accelerator.wait_for_everyone()


def training_arguments(config: RunConfig, run_dir: Path, precision: Precision) -> Any:
    """The Seq2SeqTrainingArguments of a run: the recipe, checkpoints under run_dir, on the
    device and in the arithmetic of ``precision``."""
    return Seq2SeqTrainingArguments(
        output_dir=str(RunFolder(run_dir).checkpoints),
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
        save_total_limit=2,  # the last and the best; averaging keeps more (WorkbenchTrainer)
        load_best_model_at_end=True,
        # The early-stopping count (stateful_callbacks in trainer_state.json) goes on after
        # a resume instead of starting again at 0.
        restore_callback_states_from_checkpoint=True,
        metric_for_best_model=config.select_on,  # "bleu", or "comet" when the user asks
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
        fp16=precision.fp16,
        bf16=precision.bf16,
        tf32=True if precision.training_tf32 else None,
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
        ddp_find_unused_parameters=False,  # every parameter is used: skip the extra graph walk
        ddp_timeout=config.ddp_timeout,
        use_cpu=precision.device == "cpu",
        **checkpointing_arguments(config.gradient_checkpointing),
    )


def checkpointing_arguments(on: bool) -> dict[str, Any]:
    """transformers' activation (gradient) checkpointing, by the name this version takes:
    ``activation_checkpointing`` since it replaced ``gradient_checkpointing`` in 5.x.

    Non-reentrant: the reentrant kind passes no gradient through a frozen embedding, which
    every LoRA run has.
    """
    new = hasattr(Seq2SeqTrainingArguments, "activation_checkpointing")
    name = "activation_checkpointing" if new else "gradient_checkpointing"
    return {name: on, f"{name}_kwargs": {"use_reentrant": False} if on else None}


def longest_first(dataset: Any, references: list[T]) -> tuple[Any, list[T]]:
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


def build_trainer(
    config: RunConfig,
    model: Any,
    tokenizer: Any,
    train: Sequence[Pair],
    validation: list[Pair],
    run_dir: Path,
    precision: Precision,
    callbacks: list[Any] | None = None,
    direction: Direction | None = None,
    lease: RunLease | None = None,
) -> WorkbenchTrainer:
    """The Trainer ``workbench train`` runs, over tokenized pairs; checkpoints in run_dir
    (while ``lease``, if given, is held).

    One place for the recipe (tokenizing, batching, collating, metrics), so that
    benchmarks/speed.py times exactly what users run.
    """

    encoder = PairTokenizer(
        tokenizer, direction or Direction(), config.max_source_length, config.max_target_length
    )
    train_set, train_lengths = training_set(train, encoder)
    val_set, pairs = longest_first(training_set(validation, encoder)[0], list(validation))
    references = [p.target for p in pairs]
    comet = None
    if config.select_on == "comet" and config.comet:  # loaded for each evaluation only
        from workbench.core.evaluate.comet_sets import epoch_comet

        comet = epoch_comet(config.comet, [p.source for p in pairs], references, precision.device)
    trainer = WorkbenchTrainer(
        model=model,
        args=training_arguments(config, run_dir, precision),
        train_dataset=train_set,
        eval_dataset=val_set,
        data_collator=(
            PromptCollator(int(tokenizer.pad_token_id))
            if encoder.direction.causal
            else DecoderInputsCollator(tokenizer, model=model, label_pad_token_id=-100)
        ),
        processing_class=tokenizer,
        compute_metrics=make_compute_metrics(
            tokenizer, config.bleu_tokenize, references, encoder.direction, comet
        ),
        callbacks=callbacks,
    )
    trainer.lease = lease
    trainer.train_lengths = train_lengths
    if config.average_checkpoints:
        trainer.averaging = (config.average_checkpoints, config.average)
    if config.early_stopping:
        trainer.add_callback(early_stopping_callback(config.early_stopping))
    # Our events replace the Trainer's own dict printing and tqdm bars.
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    return trainer


def tensorboard_callback(folder: Path) -> Any:
    """transformers' TensorBoard callback, writing event files into the run folder."""
    from transformers.integrations import TensorBoardCallback

    callback = TensorBoardCallback()
    callback.logging_dir = str(folder)  # default: under checkpoints/, named by date and host
    return callback


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
