"""A ``--shard`` run's checkpoints: one file of shards per rank (torch's distributed
checkpoint, written by accelerate through the Trainer), told complete, and merged into an
ordinary model folder.

A sharded ``checkpoint-N/`` holds ``pytorch_model_fsdp_0/`` (the weights) and
``optimizer_0/`` (AdamW's moments), each a ``.metadata`` file and one ``__R_0.distcp``
per rank R, beside the Trainer's state. The workbench adds what a merge needs and the
Trainer does not write: the model's ``config.json`` and generation config, the tokenizer,
``workbench.json``, and a LoRA run's ``adapter_config.json``
(:meth:`~.trainer.WorkbenchTrainer._save_checkpoint`).

- **Complete** (:func:`missing_shards`): every file the metadata names is there, at
  least as long as the metadata says. A rank's lost file is a checkpoint that cannot be
  resumed, said in one line.
- **Merged** (:func:`merge_checkpoint`): rank 0 reads every shard from disk, no process
  group needed (accelerate's ``merge_fsdp_weights`` reads them the same way), into a
  model built on the meta device, so the merge holds one copy of the weights. A LoRA
  run's shards hold its adapters alone: they are merged, by peft, into the base model
  its adapter config names. The result is the folder
  ``translate``, ``score``, the CTranslate2 export and the report read, the same as an
  unsharded run's ``best_model/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.core.atomic import save_atomically
from workbench.core.records.model_settings import (
    ModelSettings,
    read_model_settings,
    write_model_settings,
)
from workbench.errors import WorkbenchError

#: accelerate's folder names for the first model's and optimizer's shards.
MODEL_SHARDS = "pytorch_model_fsdp_0"
OPTIMIZER_SHARDS = "optimizer_0"
#: peft's adapter configuration, written into a sharded LoRA run's checkpoints.
ADAPTER_CONFIG = "adapter_config.json"


def is_sharded(checkpoint: Path) -> bool:
    """Whether ``checkpoint`` was written by a ``--shard`` run."""
    return (checkpoint / MODEL_SHARDS).is_dir()


def missing_shards(checkpoint: Path) -> list[str]:
    """The files of ``checkpoint``'s shards that are missing or cut short (none: it is
    whole), read from each distributed checkpoint's ``.metadata``."""
    from torch.distributed.checkpoint import FileSystemReader

    missing: list[str] = []
    for part in (MODEL_SHARDS, OPTIMIZER_SHARDS):
        folder = checkpoint / part
        try:
            metadata = FileSystemReader(str(folder)).read_metadata()
        except (OSError, ValueError, EOFError):
            missing.append(f"{part}/.metadata")
            continue
        needed: dict[str, int] = {}
        for info in (metadata.storage_data or {}).values():
            end = info.offset + info.length
            needed[info.relative_path] = max(needed.get(info.relative_path, 0), end)
        for name, size in sorted(needed.items()):
            file = folder / name
            if not file.is_file() or file.stat().st_size < size:
                missing.append(f"{part}/{name}")
    return missing


def check_shards(checkpoint: Path) -> None:
    """One line when a sharded checkpoint lacks a rank's files: it cannot be resumed."""
    missing = missing_shards(checkpoint)
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        shown = ", ".join(missing[:3]) + more
        raise WorkbenchError(
            f"{checkpoint} is a sharded checkpoint with files missing ({shown}): each rank "
            "wrote its own; copy them back from the node that wrote them (a run folder on "
            "storage every node shares keeps them together), or start the run again "
            "without --resume"
        )


def full_state(checkpoint: Path) -> dict[str, Any]:
    """Every weight of a sharded checkpoint, whole, read from its files on this process."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint import format_utils

    state: dict[str, Any] = {}
    format_utils._load_state_dict(
        state,
        storage_reader=dcp.FileSystemReader(str(checkpoint / MODEL_SHARDS)),
        planner=format_utils._EmptyStateDictLoadPlanner(),
        no_dist=True,
    )
    # accelerate saves {"model": weights}
    return state["model"] if set(state) == {"model"} else state


def merged_model(checkpoint: Path) -> Any:
    """The plain model of a sharded checkpoint: built on the meta device and given the
    checkpoint's weights; a LoRA run's (whose shards hold the adapters alone) is its base
    model with the adapters merged in."""
    from transformers import AutoConfig

    from workbench.core.model.meta_model import meta_model

    if (checkpoint / ADAPTER_CONFIG).is_file():
        return _merged_adapters(checkpoint)
    model = meta_model(AutoConfig.from_pretrained(checkpoint))
    model.load_state_dict(full_state(checkpoint), strict=True, assign=True)
    model.tie_weights()  # assign gave each tied name its own tensor: one again
    return model


def _merged_adapters(checkpoint: Path) -> Any:
    """A LoRA run's base model (as its adapter config names it) with the checkpoint's
    adapters merged in, by peft."""
    from peft import LoraConfig, get_peft_model, set_peft_model_state_dict

    from workbench.core.model.load import load_model_and_tokenizer

    lora = LoraConfig.from_pretrained(str(checkpoint))
    base, _ = load_model_and_tokenizer(str(lora.base_model_name_or_path))
    model = get_peft_model(base, lora)
    loaded: Any = set_peft_model_state_dict(model, full_state(checkpoint))  # torch's keys
    unexpected: list[str] = loaded.unexpected_keys
    if unexpected:
        raise WorkbenchError(
            f"{checkpoint}'s adapters do not fit {lora.base_model_name_or_path} "
            f"({unexpected[0]} has no place in it); merge it with the base model the run "
            "trained"
        )
    return model.merge_and_unload()


def merge_checkpoint(
    checkpoint: Path, destination: Path, settings: ModelSettings | None = None
) -> Path:
    """Write ``checkpoint``'s model, merged, to ``destination`` as ordinary safetensors,
    atomically, with its tokenizer and ``workbench.json`` (``settings``, else the one the
    checkpoint holds)."""
    from transformers import AutoTokenizer

    from workbench.core.model.load import quiet_libraries

    quiet_libraries()  # no save progress bars: the caller says what was merged
    check_shards(checkpoint)
    model = merged_model(checkpoint)
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    kept = settings or read_model_settings(checkpoint)

    def write(folder: Path) -> None:
        model.save_pretrained(str(folder))
        tokenizer.save_pretrained(str(folder))
        if kept is not None:
            write_model_settings(folder, kept)

    save_atomically(destination, write)
    return destination


def write_merge_files(checkpoint: Path, model: Any, tokenizer: Any, settings: Any) -> None:
    """What a merge of ``checkpoint`` needs besides the shards: the model's config and
    generation config, the tokenizer, ``workbench.json`` and a LoRA run's adapter config
    (rank 0, into the staged checkpoint)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    base.config.save_pretrained(str(checkpoint))
    if getattr(base, "generation_config", None) is not None:
        base.generation_config.save_pretrained(str(checkpoint))
    tokenizer.save_pretrained(str(checkpoint))
    if settings is not None:
        write_model_settings(checkpoint, settings)
    if hasattr(model, "peft_config"):
        model.peft_config["default"].save_pretrained(str(checkpoint))
