"""Checkpoints that are whole or absent, and the models saved from them.

A kill or a full disk can stop a save half-way. Everything here makes sure that what a
later step reads -- a checkpoint to resume from, a run's ``best_model/``, the published
model -- is either complete or not there at all.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from workbench.core.atomic import fsync_tree, replace_folder, save_atomically
from workbench.core.events import EventSink, Note
from workbench.core.live.liveness import run_liveness
from workbench.core.live.writer import RunFolderBusy, busy_message
from workbench.core.records.files import read_json_dict
from workbench.core.records.model_settings import ModelSettings, write_model_settings
from workbench.core.run_folder.layout import OutputFolder, RunFolder
from workbench.core.run_folder.output_folder import run_folders
from workbench.core.run_folder.summary_file import is_finished, read_summary
from workbench.core.train.lora import (
    ADAPTER_WEIGHTS,
    is_adapted,
    load_adapter_weights,
    save_merged,
)
from workbench.core.train.sharded_checkpoint import (
    OPTIMIZER_SHARDS,
    is_sharded,
    merge_checkpoint,
)
from workbench.errors import WorkbenchError

#: Checkpoint files that are training state, not part of a model one can load.
TRAINING_STATE_FILES = (
    "optimizer.pt",
    "scheduler.pt",
    "scaler.pt",
    "rng_state*.pth",
    "trainer_state.json",
    "training_args.bin",
)


def is_complete_checkpoint(folder: Path) -> bool:
    """A checkpoint the Trainer can resume from: state, weights (a LoRA run's: the
    adapter's) and optimizer written; a sharded run's, its shards' folders (whether every
    rank's file is there is :func:`~.sharded_checkpoint.check_shards`'s to say)."""
    if is_sharded(folder):
        return (folder / "trainer_state.json").is_file() and (folder / OPTIMIZER_SHARDS).is_dir()
    weights = ("model.safetensors", "pytorch_model.bin", ADAPTER_WEIGHTS)
    has_weights = any((folder / n).is_file() for n in weights)
    return (
        has_weights
        and (folder / "trainer_state.json").is_file()
        and (folder / "optimizer.pt").is_file()
    )


def last_complete_checkpoint(run_dir: Path, on_event: EventSink | None = None) -> Path | None:
    """The highest-numbered complete ``checkpoint-N``; incomplete ones are skipped.

    transformers' ``get_last_checkpoint`` takes the highest number without looking inside,
    so a checkpoint half-written by a kill or a full disk would make resume fail.
    """
    folder = RunFolder(run_dir).checkpoints
    if not folder.is_dir():
        return None
    found = sorted(
        (p for p in folder.glob("checkpoint-*") if p.name.split("-")[-1].isdigit()),
        key=lambda p: int(p.name.split("-")[-1]),
        reverse=True,
    )
    for ckpt in found:
        if is_complete_checkpoint(ckpt):
            return ckpt
        if on_event:
            on_event(Note(f"skipping incomplete checkpoint {ckpt.name}", "warning"))
    return None


def find_resumable_run(output_root: Path, refuse_live: bool = True) -> Path | None:
    """The newest run folder that has not finished and has a complete checkpoint, or that
    was stopped while ranking its candidates (``--objective``), before any step.

    A live run on the way there is refused (:class:`RunFolderBusy`): ``--resume`` means
    the newest unfinished run, and that one has a writer already. (Not for a distributed
    run's other ranks, which find the folder held by their own rank 0.)
    """
    for run in run_folders(output_root):
        if is_finished(run):
            continue
        live = run_liveness(run) if refuse_live else None
        if live is not None and live.writing:
            raise RunFolderBusy(busy_message(run, live.record))
        if last_complete_checkpoint(run) is not None or ranking_was_stopped(run):
            return run
    return None


def ranking_was_stopped(run_dir: Path) -> bool:
    """Whether the run was stopped while it ranked its training sources' candidates: it
    has no checkpoint, and ``--resume`` ranks the rest (the ranked ones are cached)."""
    summary = read_summary(run_dir)
    return (
        summary is not None
        and summary.status == "stopped"
        and summary.objective is not None
        and not summary.global_step
    )


def run_to_resume(output_root: Path, refuse_live: bool = True) -> Path:
    """The run ``--resume`` continues (:func:`find_resumable_run`), or one line with the fix."""
    run = find_resumable_run(output_root, refuse_live)
    if run is None:
        raise WorkbenchError(
            f"nothing to resume under '{OutputFolder(output_root).runs}': no unfinished run "
            "with a complete checkpoint; start a new run without --resume"
        )
    return run


def staging_folder(checkpoints: Path, name: str) -> Path:
    """Where the Trainer writes ``checkpoint-N`` before it is moved into ``checkpoints``.

    Hidden (a leading dot) and outside the ``checkpoint-*`` pattern, so neither resume
    nor the Trainer's own rotation ever takes a half-written save for a checkpoint.
    """
    return checkpoints / f".staging-{name}"


def move_staged_checkpoint(staging: Path, name: str) -> Path:
    """Flush the finished ``staging/name`` to disk and rename it into place, whole.

    The same step may be saved twice (a stop right after a save): the newer one replaces
    the older. Returns the checkpoint's final folder.
    """
    staged = staging / name
    destination = staging.parent / name
    fsync_tree(staged)
    replace_folder(staged, destination)
    shutil.rmtree(staging, ignore_errors=True)
    return destination


def save_best_model(trainer: Any, destination: Path, settings: ModelSettings) -> None:
    """Save the trainer's model (the best one, loaded at the end) with its settings file;
    a LoRA run's merged, its adapter beside it (:func:`save_merged`)."""
    if trainer.is_fsdp_enabled:  # shards on disk: the best checkpoint's, merged
        best = trainer.state.best_model_checkpoint
        source = Path(best) if best else last_complete_checkpoint(destination.parent)
        if source is None:
            raise WorkbenchError(f"no checkpoint of {destination.parent} to merge")
        merge_checkpoint(source, destination, settings, trainer.model.generation_config)
        return
    if is_adapted(trainer.model):
        save_merged(trainer.model, trainer.processing_class, destination, settings)
        return

    def write_best(folder: Path) -> None:
        trainer.save_model(str(folder))
        write_model_settings(folder, settings)

    save_atomically(destination, write_best)


def keep_best_so_far(trainer: Any, run_dir: Path, settings: ModelSettings) -> Path | None:
    """Save the best checkpoint evaluated so far as the run's ``best_model/``.

    Used when a run fails part-way (a NaN loss): the weights in memory may be broken, but
    the best checkpoint on disk is good and is what the user wants to keep.
    """
    best = trainer.state.best_model_checkpoint
    if not best or not is_complete_checkpoint(Path(best)):
        return None
    destination = RunFolder(run_dir).best_model
    if is_sharded(Path(best)):
        generation = trainer.model.generation_config
        return merge_checkpoint(Path(best), destination, settings, generation)
    if is_adapted(trainer.model):
        load_adapter_weights(trainer.model, Path(best))
        save_merged(trainer.model, trainer.processing_class, destination, settings)
        return destination

    def copy_model(folder: Path) -> None:
        shutil.copytree(
            best, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*TRAINING_STATE_FILES)
        )
        write_model_settings(folder, settings)

    save_atomically(destination, copy_model)
    return destination


def publish_model(source: Path, destination: Path) -> None:
    """Replace ``destination`` with a copy of ``source``, atomically."""
    save_atomically(
        destination, lambda staging: shutil.copytree(source, staging, dirs_exist_ok=True)
    )


def checkpoint_to_merge(run_dir: Path) -> Path:
    """The checkpoint of ``run_dir`` its best model comes from: the best one its newest
    complete checkpoint names, else that newest one; one line when it has no sharded
    checkpoint."""
    last = last_complete_checkpoint(run_dir)
    if last is None or not is_sharded(last):
        raise WorkbenchError(
            f"{run_dir} has no sharded checkpoint to merge (only a --shard run's checkpoints "
            "are shards; any other run's best_model/ is already whole)"
        )
    best = read_best_checkpoint(last)
    folder = RunFolder(run_dir).checkpoints
    return folder / best if best and (folder / best).is_dir() else last


def run_to_merge(run_dir: Path, force: bool) -> tuple[Path, Path]:
    """The checkpoint ``export --merge`` merges and the ``best_model/`` it writes; one
    line for a run still writing (its checkpoints rotate, and its own end writes that
    folder) or a ``best_model/`` that is there already (unless ``force``)."""
    live = run_liveness(run_dir)
    if live is not None and live.writing:
        raise WorkbenchError(
            f"{run_dir.name} is still running, and its checkpoints change while it does; "
            f"stop it first (workbench stop {run_dir.name}) or let it finish"
        )
    checkpoint = checkpoint_to_merge(run_dir)
    destination = RunFolder(run_dir).best_model
    if destination.exists() and not force:
        raise WorkbenchError(
            f"{destination} already exists; pass --force to merge {checkpoint.name} into it again"
        )
    return checkpoint, destination


def read_best_checkpoint(checkpoint: Path) -> str | None:
    """The name of the best checkpoint that ``checkpoint``'s trainer state records."""
    state = read_json_dict(checkpoint / "trainer_state.json") or {}
    best = state.get("best_model_checkpoint")
    return Path(str(best)).name if best else None


def checkpoint_world_size(checkpoint: Path) -> int:
    """How many processes wrote ``checkpoint``: the highest rank that left a file, plus
    one. The Trainer saves one RNG state per process (``rng_state_R.pth``, or
    ``rng_state.pth`` alone for one); a sharded run's ranks also write ``__R_0.distcp``
    each, so a rank that lost one file is still counted."""
    ranks = [int(p.stem.rsplit("_", 1)[1]) for p in checkpoint.glob("rng_state_*.pth")]
    ranks += [int(p.name.split("_")[2]) for p in checkpoint.glob("*/__*_0.distcp")]
    return max(ranks, default=0) + 1


def check_world_size(checkpoint: Path, world: int) -> None:
    """One line when a run is resumed by another number of processes than wrote it.

    The weights could be resharded (torch's distributed checkpoints can), but the run
    could not go on as it was: its steps are global batches of that many processes, so
    its schedule, its epoch boundaries and the batches left would all change.
    """
    wrote = checkpoint_world_size(checkpoint)
    if wrote != world:
        launch = (
            "run it as one process" if wrote == 1 else f"launch it with --nproc_per_node={wrote}"
        )
        raise WorkbenchError(
            f"{checkpoint.name} was written by {wrote} process{'es' if wrote > 1 else ''} "
            f"and this job has {world}; a run's steps are batches of all its processes, so "
            f"it goes on only as it began: {launch} (or start a new run)"
        )
