"""The two recipes under test, each built as its own users build it.

* **reference** -- the assignment's code: every example padded to 128 (labels padded with
  -100), a default ``Seq2SeqTrainer``, the model's default decoding.
* **workbench** -- the trainer ``workbench train`` runs, imported from
  ``workbench.core.train.recipe``, not re-implemented, so the benchmark times exactly
  what users run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .model import load_model
from .results import Arm, SavedPairs

if TYPE_CHECKING:
    import datasets
    from transformers import MarianMTModel, PreTrainedTokenizerBase, Seq2SeqTrainer

    from workbench.core.config.run_config import RunConfig

MAX_LEN = 128  # the assignment's max source/target length
BATCH = 16  # the assignment's batch size, training and evaluation


def reference_dataset(
    pairs: list[list[str]], tokenizer: PreTrainedTokenizerBase
) -> datasets.Dataset:
    """The assignment's preprocessing: everything padded to 128, label padding -> -100."""
    import datasets

    inputs = tokenizer(
        [s for s, _ in pairs], max_length=MAX_LEN, truncation=True, padding="max_length"
    )
    labels = tokenizer(
        text_target=[t for _, t in pairs], max_length=MAX_LEN, truncation=True, padding="max_length"
    )["input_ids"]
    labels = [[(i if i != tokenizer.pad_token_id else -100) for i in row] for row in labels]
    return datasets.Dataset.from_dict(
        {
            "input_ids": inputs["input_ids"],
            "attention_mask": inputs["attention_mask"],
            "labels": labels,
        }
    )


def workbench_config(out_dir: Path) -> RunConfig:
    """The opus-en-zh preset (batch 16/16, lr 2e-5, lengths 128, greedy per-epoch eval)."""
    from workbench.core.config.build import build_config

    # No target label: the test vocabulary has none, and the reference adds none either.
    return build_config(
        "opus-en-zh",
        overrides={
            "target_label": "none",
            "epochs": 1,
            "output_dir": str(out_dir),
            "logging_steps": 1,
        },
    )


def build_trainer(
    arm: Arm,
    phase: str,
    workdir: Path,
    device: str,
) -> tuple[Seq2SeqTrainer, MarianMTModel, PreTrainedTokenizerBase, SavedPairs]:
    """The arm's trainer over the saved model and data, as its recipe builds it."""
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    from workbench.core.evaluate.metrics import make_compute_metrics

    model, tokenizer, data = load_model(workdir, device)
    out = workdir / f"out-{arm}-{phase}-{os.getpid()}"
    train_pairs, val_pairs = data["train"], data["validation"]
    if arm == "reference":
        args = Seq2SeqTrainingArguments(
            output_dir=str(out),
            per_device_train_batch_size=BATCH,
            per_device_eval_batch_size=BATCH,
            learning_rate=2e-5,
            weight_decay=0.01,
            num_train_epochs=1,
            predict_with_generate=True,
            eval_strategy="epoch",
            logging_steps=1,
            report_to="none",
            disable_tqdm=True,
            seed=42,
            use_cpu=device == "cpu",
        )
        trainer = Seq2SeqTrainer(
            model=model,
            args=args,
            train_dataset=reference_dataset(train_pairs, tokenizer),
            eval_dataset=reference_dataset(val_pairs, tokenizer),
            data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
            processing_class=tokenizer,
            compute_metrics=make_compute_metrics(tokenizer, "zh"),
        )
    else:
        from workbench.core.data.pair import Pair
        from workbench.core.train.recipe import build_trainer
        from workbench.core.train.run_model import configure_generation, resolve_precision

        config = workbench_config(out)
        configure_generation(model, config)
        trainer = build_trainer(
            config,
            model,
            tokenizer,
            [Pair(s, t) for s, t in train_pairs],
            [Pair(s, t) for s, t in val_pairs],
            out,
            resolve_precision(config, device),
        )
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    return trainer, model, tokenizer, data
