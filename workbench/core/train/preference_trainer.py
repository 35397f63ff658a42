"""The Trainer of ``train --objective cpo|dpo``: :class:`~.trainer.WorkbenchTrainer`
(its batch order, checkpoints, evaluation and model release unchanged) trained on
preference pairs instead of references.

A training batch is a :class:`~.preference_batches.PreferenceCollator` batch of 2B rows,
the chosen translations first: one forward pass gives every row's summed target
log-probability (:func:`~.preference_loss.sequence_logps`), and the loss compares each
chosen half's row with its rejected twin (:mod:`.preference_loss`). DPO compares both
with a reference model's, computed without gradients: a frozen copy of the starting
model for full fine-tuning (:func:`reference_model`), or, for a LoRA run, the same model
with its adapters switched off (peft's ``disable_adapter()``: the base weights are the
starting model, so no copy is needed).

Evaluation is the ordinary validation set (references, BLEU), which WorkbenchTrainer
scores as in any run: the preference objective changes what is trained, not how a run
is judged or which checkpoint is best.

Like :mod:`.trainer`, this module imports torch and transformers at the top: import it
only inside functions that train.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from workbench.core.config.run_config import RunConfig
from workbench.core.data.pair import Pair
from workbench.core.data.tokenize import PairTokenizer
from workbench.core.languages import Direction
from workbench.core.live.lease import RunLease
from workbench.core.records.run_records import Precision
from workbench.core.train import loss as token_loss
from workbench.core.train.lora import is_adapted
from workbench.core.train.objective import PREFERENCE_OBJECTIVES
from workbench.core.train.preference_batches import preference_collator, preference_dataset
from workbench.core.train.preference_loss import (
    PreferenceLoss,
    cpo_loss,
    dpo_loss,
    sequence_logps,
    token_nll,
)
from workbench.core.train.recipe import build_trainer
from workbench.core.train.trainer import WorkbenchTrainer


def reference_model(model: Any, lora: bool) -> Any:
    """DPO's reference for ``model`` before it trains: a frozen copy in evaluation mode
    for full fine-tuning; None for a LoRA model, whose reference is itself with its
    adapters off."""
    if lora:
        return None
    reference = copy.deepcopy(model).eval()
    reference.requires_grad_(False)
    return reference


class PreferenceTrainer(WorkbenchTrainer):
    """WorkbenchTrainer whose training loss is CPO's or DPO's on preference batches.

    Logged with each training loss, as trl names them: ``rewards/accuracies`` and
    ``rewards/margins`` (means over the steps since the last log), and CPO's
    ``nll_loss``.
    """

    objective: str = "cpo"  # build_preference_trainer sets these four
    beta: float = 0.1
    nll_weight: float = 1.0
    reference: Any = None  # DPO's frozen model; None for a LoRA run (adapters off)
    # The loss is a mean over the batch's pairs, not normalised by num_items_in_batch:
    # the Trainer divides it by the gradient-accumulation steps.
    loss_is_scaled_for_ga = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.preference_logs: dict[str, list[float]] = defaultdict(list)
        # The Trainer divides a loss by the accumulation steps unless the model takes loss
        # keyword arguments (Marian's forward does); ours takes none, on every 5.x.
        self.model_accepts_loss_kwargs = False

    def compute_loss(
        self,
        model: Any,
        inputs: dict[str, Any],
        return_outputs: bool = False,
        num_items_in_batch: Any = None,
    ) -> Any:
        """CPO's or DPO's loss on a training batch (chosen rows, then rejected ones);
        WorkbenchTrainer's on an evaluation batch (the references)."""
        if return_outputs or not model.training:
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        labels = inputs["labels"]
        pairs = len(labels) // 2
        logits, targets = self._aligned(model, model(**self._forward_inputs(inputs)).logits, labels)
        logps = sequence_logps(logits, targets)
        if self.objective == "dpo":
            with torch.no_grad():
                reference_logits = self._reference_logits(model, inputs)
                reference = sequence_logps(*self._aligned(model, reference_logits, labels))
            result = dpo_loss(
                logps[:pairs], logps[pairs:], reference[:pairs], reference[pairs:], self.beta
            )
        else:
            nll = token_nll(logits[:pairs], targets[:pairs])
            result = cpo_loss(logps[:pairs], logps[pairs:], nll, self.beta, self.nll_weight)
            self.preference_logs["nll_loss"].append(float(nll.detach()))
        self._keep(result)
        return token_loss.tied_to_trainable(result.loss, model)

    @staticmethod
    def _forward_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
        """The batch as the model's forward takes it: no labels (the model's own loss is
        not wanted), no cache."""
        return {**{k: v for k, v in inputs.items() if k != "labels"}, "use_cache": False}

    def _aligned(self, model: Any, logits: Any, labels: Any) -> tuple[Any, Any]:
        """Logits and labels position for position: a decoder-only model's logits at
        position t predict the label at t + 1."""
        unwrapped = token_loss.base_model(self.accelerator.unwrap_model(model))
        if unwrapped.config.is_encoder_decoder:
            return logits, labels
        return logits[:, :-1], labels[:, 1:]

    def _reference_logits(self, model: Any, inputs: dict[str, Any]) -> Any:
        """DPO's reference model's logits on the batch (called without gradients)."""
        if self.reference is not None:
            return self.reference(**self._forward_inputs(inputs)).logits
        with _adapters_off(self.accelerator.unwrap_model(model)) as base:
            return base(**self._forward_inputs(inputs)).logits

    def _keep(self, result: PreferenceLoss) -> None:
        """Keep a step's reward statistics until the next training log."""
        self.preference_logs["rewards/accuracies"].append(float(result.accuracy))
        self.preference_logs["rewards/margins"].append(float(result.margin))

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        """The Trainer's log, a training log with the preference statistics' means."""
        if "loss" in logs and self.preference_logs:
            for name, values in self.preference_logs.items():
                logs[name] = sum(values) / len(values)
            self.preference_logs.clear()
        super().log(logs, start_time)


@contextmanager
def _adapters_off(model: Any) -> Iterator[Any]:
    """A LoRA model as its base model, in evaluation mode (no dropout: the reference's
    log-probabilities are the starting model's), its mode restored after."""
    training = model.training
    model.eval()
    try:
        with model.disable_adapter():
            yield model
    finally:
        model.train(training)


def build_preference_trainer(
    config: RunConfig,
    model: Any,
    tokenizer: Any,
    rows: Sequence[tuple[str, str, str]],
    validation: list[Pair],
    run_dir: Path,
    precision: Precision,
    callbacks: list[Any] | None = None,
    direction: Direction | None = None,
    lease: RunLease | None = None,
    reference: Any = None,
) -> PreferenceTrainer:
    """:func:`~.recipe.build_trainer`'s Trainer trained on ``rows``, (source, chosen,
    rejected) triples, by ``config.objective`` (cpo or dpo), ``beta`` and ``nll_weight``;
    ``reference`` is DPO's (:func:`reference_model`), None for CPO or a LoRA model."""
    if config.objective not in PREFERENCE_OBJECTIVES:
        raise ValueError(f"not a preference objective: {config.objective!r}")
    if config.objective == "dpo" and reference is None and not is_adapted(model):
        raise ValueError("DPO on full fine-tuning needs a reference model (reference_model)")

    def training_rows(encoder: PairTokenizer) -> tuple[Any, list[int], Any]:
        dataset, lengths = preference_dataset(rows, encoder)
        causal = encoder.direction.causal
        return dataset, lengths, preference_collator(tokenizer, model, causal)

    trainer = build_trainer(
        config,
        model,
        tokenizer,
        [],
        validation,
        run_dir,
        precision,
        callbacks,
        direction,
        lease,
        trainer_class=PreferenceTrainer,
        training_rows=training_rows,
    )
    assert isinstance(trainer, PreferenceTrainer)
    # The Trainer would drop the dataset's chosen_*/rejected_* columns, which no forward
    # takes: the collator needs them.
    trainer.args.remove_unused_columns = False
    trainer.objective = config.objective
    trainer.beta = config.beta
    trainer.nll_weight = config.nll_weight
    # The Trainer put the model on its device; the reference goes beside it.
    trainer.reference = reference.to(trainer.args.device) if reference is not None else None
    return trainer
