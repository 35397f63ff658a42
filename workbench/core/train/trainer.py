"""The Seq2SeqTrainer ``workbench train`` runs: the batch order that makes a resume exact,
the loss on real target tokens, a decoder-only model's evaluation, checkpoints that appear
whole, and the model let go once the best one is saved. What it is given (its arguments,
the tokenized pairs, the collator, the metrics) is :mod:`.recipe`; the callback that turns
its logs into events is :mod:`.callbacks`.

This module imports torch and transformers at the top. Import it only inside functions
that train (``run_training`` does, once the run trains), so that ``workbench --help`` and
the checks before a run stay quick and torch-free. ``benchmarks/speed.py`` builds its
workbench arm from here too, so it times exactly what users run.
"""

from __future__ import annotations

import gc
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch.utils.data import SequentialSampler
from transformers import Seq2SeqTrainer
from transformers.trainer_pt_utils import LengthGroupedSampler
from transformers.trainer_utils import rotate_checkpoints

from workbench.core.live.lease import RunLease, holds
from workbench.core.train import loss as token_loss
from workbench.core.train.averaging import keep_for_averaging
from workbench.core.train.batches import prompted_generation
from workbench.core.train.checkpoints import move_staged_checkpoint, staging_folder

if TYPE_CHECKING:
    from datasets import Dataset


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
    - **No evaluation at a stop** (:class:`~.callbacks.EventCallback`): an evaluation of
      the partial epoch would also draw from the RNG and could become the "best" model.
      With both, a resumed run equals an uninterrupted one bit for bit on CPU (tested).
      Reseeding the RNG before every step also made resume exact, but the demo then
      learned far worse, so it is not done.
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

    def release_model(self) -> None:
        """Let go of the trained model and its optimizer state once the best model is
        saved: decoding "after" loads that model from disk, and two copies of a large model
        (one with AdamW's moments) could take more memory than the memory plan's training
        step."""
        released: Any = None
        self.model = self.model_wrapped = released
        self.optimizer = self.lr_scheduler = released
        self.accelerator.free_memory()
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
