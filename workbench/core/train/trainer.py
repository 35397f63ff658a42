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
from workbench.core.train.sharded_checkpoint import write_merge_files

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
    #: workbench.json of the models the run saves: a sharded checkpoint keeps it for its
    #: merge (the run sets it).
    model_settings: Any = None

    def create_accelerator_and_postprocess(self) -> None:
        """The Trainer's accelerator; a sharded run on the CPU made FSDP again.

        accelerate takes a multi-process CPU job (gloo) for DDP and drops the FSDP plugin
        it was given without a word: the parameters stay whole on every rank. Switching
        the shared state to FSDP with the Trainer's own plugin makes accelerate shard
        the model with FSDP2 as it does on GPUs (``fully_shard``, DTensor parameters),
        so the CPU runs and tests shard for real. On GPUs the Trainer does this itself.
        """
        super().create_accelerator_and_postprocess()
        from accelerate.state import PartialState
        from accelerate.utils import DistributedType, FullyShardedDataParallelPlugin

        state = self.accelerator.state
        plugin_args = self.args.fsdp_plugin_args
        if plugin_args is None or state.distributed_type != DistributedType.MULTI_CPU:
            return
        state.distributed_type = DistributedType.FSDP
        PartialState._shared_state["distributed_type"] = DistributedType.FSDP
        plugin = FullyShardedDataParallelPlugin(**plugin_args)
        if state.mixed_precision != "no":  # as accelerate sets up FSDP on GPUs
            plugin.set_mixed_precision(state.mixed_precision)
        state.fsdp_plugin = plugin
        self.is_fsdp_enabled = True

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
        if self._sharded_causal_smoothing(unwrapped, inputs):
            return self._causal_smoothed_loss(model, inputs, return_outputs, num_items_in_batch)
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
        return token_loss.tied_to_trainable(self._over_processes(loss, num_items_in_batch), model)

    def _over_processes(self, loss: Any, num_items_in_batch: Any) -> Any:
        """As Trainer.compute_loss: DDP and FSDP average gradients over processes, while
        ``num_items_in_batch`` already counts the global batch."""
        if (
            self.args.average_tokens_across_devices
            and self.model_accepts_loss_kwargs
            and num_items_in_batch is not None
        ):
            return loss * (self.accelerator.num_processes // self.get_tp_size())
        return loss

    def _sharded_causal_smoothing(self, unwrapped: Any, inputs: dict[str, Any]) -> bool:
        """Whether this is a sharded decoder-only model's smoothed loss, which the
        Trainer would get wrong: it shifts the labels of a causal LM only when the
        model's class name is a causal LM's, and FSDP2 renames the class
        (``FSDPQwen3ForCausalLM``), so the loss would compare each token's prediction
        with the token itself."""
        return (
            self.is_fsdp_enabled
            and self.label_smoother is not None
            and self.compute_loss_func is None
            and "labels" in inputs
            and not unwrapped.config.is_encoder_decoder
        )

    def _causal_smoothed_loss(
        self, model: Any, inputs: dict[str, Any], return_outputs: bool, num_items_in_batch: Any
    ) -> Any:
        """Trainer.compute_loss's label smoothing for a causal LM, labels shifted."""
        inputs = dict(inputs)
        labels = inputs.pop("labels")
        if self.model_accepts_loss_kwargs and num_items_in_batch is not None:
            inputs["num_items_in_batch"] = num_items_in_batch
        outputs = model(**inputs)
        smoother: Any = self.label_smoother  # set: _sharded_causal_smoothing checked it
        loss = smoother(outputs, labels, shift_labels=True, num_items_in_batch=num_items_in_batch)
        if return_outputs or not model.training:
            return (loss, outputs) if return_outputs else loss
        return token_loss.tied_to_trainable(self._over_processes(loss, num_items_in_batch), model)

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
        if self.is_fsdp_enabled and self.state.best_global_step:
            # The Trainer names the best checkpoint only if its folder exists once the
            # model is saved, and a sharded save writes the model's shards later.
            best_name = f"checkpoint-{self.state.best_global_step}"
            self.state.best_model_checkpoint = str(root / best_name)
        self.accelerator.wait_for_everyone()
        if self.is_world_process_zero() and holds(self.lease):
            # trainer_state.json names the best checkpoint: point it at the real place.
            self.state.save_to_json(str(staging / name / "trainer_state.json"))
            if self.is_fsdp_enabled:  # shards only: add what their merge reads
                write_merge_files(
                    staging / name, self.model, self.processing_class, self.model_settings
                )
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
