"""What the Trainer of a run is given: its arguments (the recipe: learning rate, epochs,
an evaluation and a checkpoint each epoch, the arithmetic), the pairs tokenized with the
validation set longest first, the collator, the metrics and the callbacks.

One place for the recipe, so that ``benchmarks/speed.py`` times exactly what users run.
Like :mod:`.trainer`, this module imports torch and transformers at the top: import it only
inside functions that train.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from transformers import Seq2SeqTrainingArguments
from transformers.trainer_callback import PrinterCallback, ProgressCallback

from workbench.core.config.run_config import RunConfig
from workbench.core.data.pair import Pair
from workbench.core.data.tokenize import PairTokenizer, training_set
from workbench.core.evaluate.metrics import make_compute_metrics
from workbench.core.languages import Direction
from workbench.core.live.lease import RunLease
from workbench.core.model.family import shard_blocks
from workbench.core.records.run_records import Precision
from workbench.core.run_folder.layout import RunFolder
from workbench.core.train.batches import pair_collator
from workbench.core.train.early_stop import early_stopping_callback
from workbench.core.train.sharding import fsdp_arguments, one_embedding_module
from workbench.core.train.trainer import WorkbenchTrainer

#: What an evaluation set's references are (a sentence, or its pair).
T = TypeVar("T")
#: A run's training rows other than its pairs, made with the run's tokenizer: the
#: Trainer's dataset, each row's source length and the collator of its batches.
TrainingRows = Callable[[PairTokenizer], tuple[Any, list[int], Any]]


def training_arguments(
    config: RunConfig, run_dir: Path, precision: Precision, blocks: tuple[str, ...] = ()
) -> Any:
    """The Seq2SeqTrainingArguments of a run: the recipe, checkpoints under run_dir, on the
    device and in the arithmetic of ``precision``; a ``--shard`` run's FSDP2 wrapping of
    ``blocks`` (:func:`~.sharding.fsdp_arguments`)."""
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
        # Under --shard, FSDP2 checkpoints its own blocks (fsdp_arguments).
        **checkpointing_arguments(config.gradient_checkpointing and not config.shard),
        **fsdp_arguments(config, blocks),
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
    trainer_class: type[WorkbenchTrainer] = WorkbenchTrainer,
    training_rows: TrainingRows | None = None,
) -> WorkbenchTrainer:
    """The Trainer ``workbench train`` runs, over tokenized pairs; checkpoints in run_dir
    (while ``lease``, if given, is held).

    One place for the recipe (tokenizing, batching, collating, metrics), so that
    benchmarks/speed.py times exactly what users run. A preference run
    (:mod:`.preference_trainer`) gives its own ``trainer_class`` and ``training_rows``
    in place of ``train``'s tokenized pairs; the evaluation is the same.
    """

    encoder = PairTokenizer(
        tokenizer, direction or Direction(), config.max_source_length, config.max_target_length
    )
    if training_rows is not None:
        train_set, train_lengths, collator = training_rows(encoder)
    else:
        train_set, train_lengths = training_set(train, encoder)
        collator = pair_collator(tokenizer, model, encoder.direction.causal)
    val_set, pairs = longest_first(training_set(validation, encoder)[0], list(validation))
    references = [p.target for p in pairs]
    comet = None
    if config.select_on == "comet" and config.comet:  # loaded for each evaluation only
        from workbench.core.evaluate.comet_sets import epoch_comet

        comet = epoch_comet(config.comet, [p.source for p in pairs], references, precision.device)
    if config.shard:
        one_embedding_module(model)
    trainer = trainer_class(
        model=model,
        args=training_arguments(config, run_dir, precision, shard_blocks(model)),
        train_dataset=train_set,
        eval_dataset=val_set,
        data_collator=collator,
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
