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
  its adapter config names, after checking that folder is still what it was when the
  checkpoint was saved (another run may have published over it). The result is the folder
  ``translate``, ``score``, the CTranslate2 export and the report read, the same as an
  unsharded run's ``best_model/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.atomic import save_atomically, write_json
from workbench.core.records.files import read_json_dict
from workbench.core.records.model_settings import (
    ModelSettings,
    read_model_settings,
    write_model_settings,
)
from workbench.core.records.typed import decode
from workbench.errors import WorkbenchError

#: accelerate's folder names for the first model's and optimizer's shards.
MODEL_SHARDS = "pytorch_model_fsdp_0"
OPTIMIZER_SHARDS = "optimizer_0"
#: peft's adapter configuration, written into a sharded LoRA run's checkpoints.
ADAPTER_CONFIG = "adapter_config.json"
#: A LoRA run's base model folder as it was when the checkpoint was saved
#: (:class:`MergeBase`), for the merge to check it still is.
MERGE_BASE = "merge_base.json"


@dataclass(frozen=True)
class MergeBase:
    """``merge_base.json``: the base model folder's files when the checkpoint was saved
    (:func:`~workbench.core.model.fingerprint.folder_fingerprint`)."""

    fingerprint: list[list[Any]] = field(default_factory=list)


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
        except Exception:  # missing, cut short (a truncated pickle), or not torch's at all
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


def whole_model(checkpoint: Path) -> Any:
    """The model of a full fine-tune's sharded checkpoint: built on the meta device from
    the checkpoint's config, given its weights."""
    from transformers import AutoConfig

    from workbench.core.model.meta_model import meta_model

    model = meta_model(AutoConfig.from_pretrained(checkpoint))
    model.load_state_dict(full_state(checkpoint), strict=True, assign=True)
    model.tie_weights()  # assign gave each tied name its own tensor: one again
    return model


def adapted_model(checkpoint: Path) -> Any:
    """A LoRA run's checkpoint (its shards hold the adapters alone) as a peft model: the
    base model its adapter config names, checked to be the one the run trained on, with
    the checkpoint's adapters put in."""
    from peft import LoraConfig, get_peft_model, set_peft_model_state_dict
    from transformers import AutoConfig

    from workbench.core.model.load import load_model_and_tokenizer

    lora = LoraConfig.from_pretrained(str(checkpoint))
    base_name = str(lora.base_model_name_or_path)
    check_merge_base(checkpoint, base_name)
    base, _ = load_model_and_tokenizer(base_name)
    base.config = AutoConfig.from_pretrained(checkpoint)  # the run's, as it saved it
    model = get_peft_model(base, lora)
    loaded: Any = set_peft_model_state_dict(model, full_state(checkpoint))  # torch's keys
    unexpected: list[str] = loaded.unexpected_keys
    if unexpected:
        raise WorkbenchError(
            f"{checkpoint}'s adapters do not fit {base_name} ({unexpected[0]} has no place "
            "in it); merge it with the base model the run trained"
        )
    return model


def merge_checkpoint(
    checkpoint: Path,
    destination: Path,
    settings: ModelSettings | None = None,
    generation: Any = None,
) -> Path:
    """Write ``checkpoint``'s model, merged, to ``destination`` as ordinary safetensors,
    atomically, as an unsharded run saves its best model: its tokenizer,
    ``workbench.json`` (``settings``, else the checkpoint's), its generation settings
    (``generation``, the run's own, else the checkpoint's) and, for a LoRA run, the
    adapter in ``adapter/`` beside the merged weights."""
    from transformers import AutoTokenizer, GenerationConfig

    from workbench.core.model.load import quiet_libraries
    from workbench.core.train.lora import ADAPTER_FOLDER

    quiet_libraries()  # no save progress bars: the caller says what was merged
    check_shards(checkpoint)
    adapted = (checkpoint / ADAPTER_CONFIG).is_file()
    model = adapted_model(checkpoint) if adapted else whole_model(checkpoint)
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    kept = settings or read_model_settings(checkpoint)
    if generation is None and (checkpoint / "generation_config.json").is_file():
        generation = GenerationConfig.from_pretrained(checkpoint)

    def write(folder: Path) -> None:
        merged = model
        if adapted:
            model.save_pretrained(str(folder / ADAPTER_FOLDER))
            merged = model.merge_and_unload()
        if generation is not None:
            merged.generation_config = generation
        merged.save_pretrained(str(folder))
        tokenizer.save_pretrained(str(folder))
        if kept is not None:
            write_model_settings(folder, kept)

    save_atomically(destination, write)
    return destination


def check_merge_base(checkpoint: Path, base_name: str) -> None:
    """One line when a LoRA run's base model folder is not what it was when the run
    saved ``checkpoint`` (another run published over it): its adapters merged into
    another model would be another model."""
    from workbench.core.model.fingerprint import folder_fingerprint

    data = read_json_dict(checkpoint / MERGE_BASE)
    recorded = decode(MergeBase, data) if data is not None else None
    folder = Path(base_name)
    if recorded is None or not folder.is_dir():
        return
    if recorded.fingerprint != folder_fingerprint(folder):
        raise WorkbenchError(
            f"{base_name}, the base model {checkpoint.name}'s adapters were trained on, has "
            "changed since (another run saved over it); merge with that model back in "
            "place, or train again from the model as it is"
        )


def write_merge_files(checkpoint: Path, model: Any, tokenizer: Any, settings: Any) -> None:
    """What a merge of ``checkpoint`` needs besides the shards: the model's config and
    generation config, the tokenizer, ``workbench.json``, and a LoRA run's adapter config
    with its base model folder's fingerprint (rank 0, into the staged checkpoint)."""
    from workbench.core.model.fingerprint import folder_fingerprint

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    base.config.save_pretrained(str(checkpoint))
    if getattr(base, "generation_config", None) is not None:
        base.generation_config.save_pretrained(str(checkpoint))
    tokenizer.save_pretrained(str(checkpoint))
    if settings is not None:
        write_model_settings(checkpoint, settings)
    if hasattr(model, "peft_config"):
        lora = model.peft_config["default"]
        lora.save_pretrained(str(checkpoint))
        base = Path(str(lora.base_model_name_or_path))
        if base.is_dir():  # a Hub id is pinned by the Hub cache, not by us
            write_json(checkpoint / MERGE_BASE, MergeBase(folder_fingerprint(base)).__dict__)
