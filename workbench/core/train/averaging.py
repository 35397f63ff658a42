"""Checkpoint averaging (``--average-checkpoints K``): the weights of the K best or the K
last epoch checkpoints averaged, and kept only when the average beats the best one on
validation.

As fairseq's ``scripts/average_checkpoints.py`` does it: every floating-point tensor is
the mean of its values in the K checkpoints. Here the sum is taken in float64 and cast
back, so a tensor the checkpoints share (a fixed position table) comes back bit for bit.
Tensors that are not floating point (ids, counters) are not averaged but taken from the
first checkpoint of the list. Tied weights (Marian's shared embeddings and output layer)
are one tensor in a saved checkpoint and are tied again when the model loads, so they
are averaged once and stay tied.

Whether the average is kept is decided on the validation set alone: it is decoded exactly
as the "after" side is (:func:`~workbench.core.evaluate.before_after.translate_after`:
a fresh load, fp32 decoding) and compared with the best checkpoint's validation
translations by sacreBLEU's paired bootstrap. Only a higher validation BLEU makes it the
run's best model, from which the test set's "after" is then decoded; the test set decides
nothing. The Trainer keeps the checkpoints averaging needs (:func:`keep_for_averaging`).
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.atomic import replace_folder, save_atomically
from workbench.core.config.run_config import RunConfig
from workbench.core.evaluate.before_after import HeldOutSets, translate_after
from workbench.core.evaluate.significance import score_systems
from workbench.core.events import EventSink, Note
from workbench.core.live.lease import RunLease, holds
from workbench.core.records.run_records import AveragingRecord
from workbench.core.records.typed import record_of
from workbench.core.run_folder.layout import RunFolder
from workbench.core.train.checkpoints import is_complete_checkpoint
from workbench.core.views.training_text import averaging_text

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class EpochCheckpoint:
    """A checkpoint saved at an epoch's evaluation, with that evaluation's BLEU."""

    path: Path
    step: int
    epoch: float
    bleu: float


def epoch_checkpoints(folder: Path, log_history: Iterable[dict[str, Any]]) -> list[EpochCheckpoint]:
    """The complete checkpoints in ``folder`` that an evaluation scored, oldest first.

    A checkpoint written at a stop mid-epoch was never evaluated: it is no candidate.
    """
    scored = {int(log["step"]): log for log in log_history if "eval_bleu" in log}
    found = []
    for step, log in sorted(scored.items()):
        path = folder / f"checkpoint-{step}"
        if is_complete_checkpoint(path):
            found.append(EpochCheckpoint(path, step, float(log["epoch"]), float(log["eval_bleu"])))
    return found


def choose(found: list[EpochCheckpoint], k: int, which: str) -> list[EpochCheckpoint]:
    """The ``k`` last, or the ``k`` best by BLEU (of equals the earlier, as the Trainer
    picks its best epoch), best or newest first."""
    if which == "last":
        return sorted(found, key=lambda c: c.step, reverse=True)[:k]
    return sorted(found, key=lambda c: (-c.bleu, c.step))[:k]


def keep_for_averaging(folder: Path, state: Any, k: int, which: str) -> None:
    """Delete the checkpoints in ``folder`` that neither resume, the best model nor
    averaging needs: what the Trainer's ``save_total_limit`` does without averaging.

    Kept: the checkpoint just saved (to resume from), the best one (loaded at the end) and
    the ``k`` best or last so far. The ``k`` best at the end are always among the ``k`` best
    so far plus the later ones, so nothing averaging will want is deleted.
    """
    keep = {folder / f"checkpoint-{state.global_step}"}
    if state.best_model_checkpoint:
        keep.add(folder / Path(state.best_model_checkpoint).name)
    keep.update(c.path for c in choose(epoch_checkpoints(folder, state.log_history), k, which))
    for path in folder.glob("checkpoint-*"):
        if path.name.split("-")[-1].isdigit() and path not in keep:
            shutil.rmtree(path, ignore_errors=True)


def _tensor_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.safetensors"))


def average_weights(folders: list[Path]) -> dict[str, torch.Tensor]:
    """The mean of each floating-point tensor over the checkpoints in ``folders`` (summed
    in float64, cast back to its dtype); other tensors from the first checkpoint."""
    import torch
    from safetensors import safe_open

    with ExitStack() as files:
        where: list[dict[str, Any]] = []  # per checkpoint: tensor name -> its open file
        for folder in folders:
            opened = [
                files.enter_context(safe_open(str(path), framework="pt"))
                for path in _tensor_files(folder)
            ]
            where.append({name: handle for handle in opened for name in list(handle.keys())})
        names = where[0].keys()
        for folder, tensors in zip(folders[1:], where[1:], strict=True):
            if tensors.keys() != names:
                raise ValueError(f"{folder.name} holds other tensors than {folders[0].name}")
        averaged: dict[str, torch.Tensor] = {}
        for name in names:
            first = where[0][name].get_tensor(name)
            if not first.is_floating_point():
                averaged[name] = first
                continue
            total = first.to(torch.float64)
            for tensors in where[1:]:
                value = tensors[name].get_tensor(name)
                if value.shape != first.shape:
                    raise ValueError(
                        f"{name} has shape {tuple(value.shape)}, not {tuple(first.shape)}"
                    )
                total += value.to(torch.float64)
            averaged[name] = (total / len(folders)).to(first.dtype)
    return averaged


def write_averaged_model(template: Path, folders: list[Path], destination: Path) -> None:
    """``template`` (the run's best model: config, tokenizer, settings) copied to
    ``destination`` with the averaged weights of ``folders``, written atomically."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    averaged = average_weights(folders)

    def write(staging: Path) -> None:
        shutil.copytree(template, staging, dirs_exist_ok=True)
        layout = {}  # the template's files, each with its tensor names and metadata
        for path in _tensor_files(template):
            with safe_open(str(path), framework="pt") as handle:
                layout[path.name] = (list(handle.keys()), handle.metadata())
        if {n for names, _ in layout.values() for n in names} != averaged.keys():
            raise ValueError(f"{template.name} holds other tensors than the checkpoints")
        for name, (names, metadata) in layout.items():
            save_file({n: averaged[n] for n in names}, str(staging / name), metadata)

    save_atomically(destination, write)


@dataclass(frozen=True)
class Averaging:
    """What averaging did: ``summary.json``'s record and the validation translations of
    the model that is the run's best now (so that "after" does not decode them again)."""

    record: AveragingRecord | None = None
    translations: dict[str, list[str]] = field(default_factory=dict)


def average_checkpoints(
    state: Any,
    config: RunConfig,
    held_out: HeldOutSets,
    best_dir: Path,
    device: str,
    emit: EventSink,
    lease: RunLease | None = None,
) -> Averaging:
    """Average the ``config.average_checkpoints`` best or last epoch checkpoints of a
    finished run, and make the average its best model (``best_dir``) only if it scores a
    higher BLEU on validation than the best checkpoint; what it did said in a line."""
    k, which = config.average_checkpoints, config.average
    if k < 2:
        return Averaging()
    run_dir = best_dir.parent
    found = epoch_checkpoints(RunFolder(run_dir).checkpoints, state.log_history)
    chosen = choose(found, k, which)
    in_order = sorted(chosen, key=lambda c: c.step)
    record: dict[str, Any] = dict(
        k=k,
        which=which,
        epochs=[c.epoch for c in in_order],
        checkpoints=[c.path.name for c in in_order],
    )
    best = next((c for c in found if c.step == state.best_global_step), None)
    skipped = None
    if len(chosen) < 2:
        plural = "" if len(chosen) == 1 else "s"
        skipped = f"the run has {len(chosen)} epoch checkpoint{plural}; averaging needs 2 or more"
    elif best is None:
        skipped = "the best epoch's checkpoint is not there"
    if skipped or best is None:
        skipped_record = record_of(AveragingRecord, {**record, "kept": "best", "skipped": skipped})
        emit(Note(averaging_text(skipped_record), "warning"))
        return Averaging(skipped_record)
    if len(chosen) < k:
        emit(
            Note(
                f"--average-checkpoints {k}: the run has only {len(chosen)} epoch "
                f"checkpoints; averaging those {len(chosen)}"
            )
        )
    if not holds(lease):
        return Averaging()
    averaged_dir = RunFolder(run_dir).averaged_model
    try:
        write_averaged_model(best_dir, [c.path for c in chosen], averaged_dir)
    except ValueError as err:  # checkpoints that do not fit together: the run stays as it is
        failed = record_of(AveragingRecord, {**record, "kept": "best", "skipped": str(err)})
        emit(Note(averaging_text(failed), "warning"))
        return Averaging(failed)

    validation = dataclasses.replace(
        held_out,
        pairs={"validation": held_out.pairs["validation"]},
        names={"validation": held_out.names["validation"]},
    )
    of_best = translate_after(validation, best_dir, device, emit)["validation"]
    of_average = translate_after(validation, averaged_dir, device, emit)["validation"]
    scores = score_systems(
        [("best", of_best), ("averaged", of_average)],
        validation.references("validation"),
        held_out.bleu_tokenize,
    )
    before, after = scores["best"], scores["averaged"]
    kept = after.bleu > before.bleu
    record.update(
        best_checkpoint=best.path.name,
        best_epoch=best.epoch,
        validation={
            "best": {"bleu": before.bleu, "chrf": before.chrf},
            "averaged": {"bleu": after.bleu, "chrf": after.chrf},
        },
        p_value=after.bleu_p,
        kept="averaged" if kept else "best",
    )
    if not kept:
        record["model"] = str(averaged_dir)
    emit(Note(averaging_text(record_of(AveragingRecord, record))))
    if not kept:
        return Averaging(record_of(AveragingRecord, record), {"validation": of_best})
    if not holds(lease):
        return Averaging()
    replace_folder(averaged_dir, best_dir)
    kept_record = record_of(AveragingRecord, {**record, "model": str(best_dir)})
    return Averaging(kept_record, {"validation": of_average})
