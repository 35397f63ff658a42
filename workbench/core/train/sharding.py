"""``train --shard``: one model's weights, gradients and optimizer state split over the
processes of a launched job with FSDP2, through the Hugging Face Trainer's own FSDP path.

Why the Trainer's path (accelerate's ``fsdp2_prepare_model``) and not ``fully_shard`` of
our own: the Trainer then also saves and loads the sharded checkpoints (torch's
distributed checkpoint, one file per rank, :mod:`.sharded_checkpoint`), loads the best
checkpoint at the end and clips gradients across shards; the workbench adds only what
the Trainer lacks:

- **The blocks** each rank gathers one at a time are the family's transformer layers
  (:func:`~workbench.core.model.family.shard_blocks`), never guessed per run.
- **On the CPU** (gloo), accelerate takes a multi-process job for plain DDP and drops the
  FSDP plugin without a word; :meth:`~.trainer.WorkbenchTrainer.create_accelerator_and_postprocess`
  turns it back into FSDP, so the CPU runs here and the tests shard for real.
- **A launch with accelerate's FSDP config** (``accelerate launch --config_file
  docs/launch/fsdp2.yaml``) sets ``ACCELERATE_USE_FSDP``: such a run is sharded whether
  or not ``--shard`` was typed (:func:`with_launcher`), so the plan, the checkpoints and
  the published model all know it.

Torch-free at import: the checks run before anything is loaded.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from workbench.core.config.run_config import RunConfig
from workbench.core.train import distributed
from workbench.errors import WorkbenchError

#: What the launch line looks like, for the one-line refusals.
LAUNCH = "torchrun --nproc_per_node=N -m workbench train --headless --shard …"


def launched_with_fsdp() -> bool:
    """Whether ``accelerate launch`` was given an FSDP config (it sets this variable)."""
    return os.environ.get("ACCELERATE_USE_FSDP", "").lower() == "true"


def with_launcher(config: RunConfig) -> RunConfig:
    """``config`` sharded when accelerate's launcher was told to shard, else unchanged."""
    if launched_with_fsdp() and not config.shard:
        return dataclasses.replace(config, shard=True)
    return config


def check_sharding(config: RunConfig) -> None:
    """One line for a sharded run that cannot be one: a single process has nothing to
    shard over, averaging and the preference objectives assume whole weights, and CPU
    offload needs a GPU to offload from (FSDP2 pins the host copies)."""
    if not config.shard:
        return
    launched = os.environ.get("ACCELERATE_MIXED_PRECISION", "no").lower()
    asked = "bf16" if config.bf16 else "fp16" if config.fp16 else "no"
    # the run's own bf16 where its GPUs have it
    automatic = config.bf16 is None and not config.fp16 and launched == "bf16"
    if launched in ("bf16", "fp16") and launched != asked and not automatic:
        raise WorkbenchError(
            f"accelerate launch was given mixed precision {launched} and this run asks "
            f"for {'fp32' if asked == 'no' else asked}, which its plan and records would "
            f"say; pass --{launched} to the workbench, or launch with --mixed_precision no"
        )
    if config.average_checkpoints:
        raise WorkbenchError(
            "--average-checkpoints averages whole checkpoints, and a --shard run's are "
            "shards; drop one of the two"
        )
    if config.objective != "sft":
        raise WorkbenchError(
            f"--objective {config.objective} is not sharded yet (its ranking and frozen copy "
            "assume one model per process); train it with --lora, or drop --shard"
        )
    if config.shard_offload:
        from workbench.core.model.load import pick_device

        if pick_device() == "cpu":
            raise WorkbenchError(
                "--shard-offload moves a sharded run's state from the GPUs to host memory, "
                "and this run trains on the CPU, where it is already; drop --shard-offload"
            )
    world = distributed.world_size()
    if world < 2:
        raise WorkbenchError(
            "--shard splits the model over the processes of a launched job, and this is "
            f"one process; launch it with {LAUNCH} (or accelerate launch --config_file "
            "docs/launch/fsdp2.yaml -m workbench train --headless …), or drop --shard"
        )


def fsdp_arguments(config: RunConfig, blocks: tuple[str, ...]) -> dict[str, Any]:
    """The Trainer's FSDP2 arguments for a sharded run (none for one that is not).

    - ``transformer_layer_cls_to_wrap``: the family's blocks, each its own unit; what is
      left (embeddings, the head, the final norm) is the root unit.
    - ``reshard_after_forward``: a block's gathered weights are freed after its forward
      and gathered again for its backward (ZeRO-3's trade: least memory).
    - ``SHARDED_STATE_DICT``: each rank saves its own shards; the published model is
      merged from them (:mod:`.sharded_checkpoint`).
    - ``cpu_ram_efficient_loading`` stays off: with tied embeddings (Marian, NLLB, T5)
      rank-0-only loading is not safe (verl #7834, axolotl #3977), so each rank loads the
      model in host memory before it is sharded.
    - ``--gradient-checkpointing`` is FSDP2's own activation checkpointing of the blocks
      (the Trainer's would gather each block's weights once more in the backward pass).
    - mixed precision follows ``--bf16``/``--fp16`` (the Trainer passes it to FSDP2's
      policy: parameters gathered in that type, gradients reduced in it).
    """
    if not config.shard:
        return {}
    fsdp_config: dict[str, Any] = {
        "version": 2,
        "reshard_after_forward": True,
        "state_dict_type": "SHARDED_STATE_DICT",
        "cpu_ram_efficient_loading": False,
        "cpu_offload": config.shard_offload,
        "activation_checkpointing": config.gradient_checkpointing,
    }
    if blocks:
        fsdp_config["auto_wrap_policy"] = "TRANSFORMER_BASED_WRAP"
        fsdp_config["transformer_layer_cls_to_wrap"] = list(blocks)
    else:  # no blocks known: the whole model is one unit, still sharded
        fsdp_config["auto_wrap_policy"] = "NO_WRAP"
    return {"fsdp": True, "fsdp_config": fsdp_config}


def shard_line(config: RunConfig, blocks: tuple[str, ...]) -> str:
    """The run's line saying how it is sharded."""
    units = ", ".join(blocks) if blocks else "the whole model as one unit"
    offload = "; sharded state kept in host memory (--shard-offload)"
    offload = offload if config.shard_offload else ""
    return (
        f"sharded (FSDP2) over {distributed.world_size()} processes, gathering one block at "
        f"a time: {units}{offload}"
    )


def one_embedding_module(model: Any) -> int:
    """Point every embedding that shares the input embedding's weight at the input
    embedding module itself; returns how many were re-pointed.

    A Marian built from its config keeps the shared vocabulary table in two
    ``nn.Embedding`` modules besides its input embedding (the encoder's): ``shared`` and
    the decoder's ``embed_tokens``, one parameter in all three. accelerate puts the input
    embedding and the tied output head into one FSDP2 unit, and FSDP2 refuses a parameter
    that another unit (the root, through the other modules) also manages. One module
    under three names computes the same and is gathered once.
    """
    embedding = model.get_input_embeddings()
    weight = getattr(embedding, "weight", None)
    if weight is None:
        return 0
    moved = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if (
                child is not embedding
                and type(child) is type(embedding)
                and getattr(child, "weight", None) is weight
            ):
                setattr(parent, name, embedding)
                moved += 1
    return moved
