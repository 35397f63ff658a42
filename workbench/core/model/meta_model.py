"""A model's parameters counted from its config alone, on torch's meta device.

The memory plan must come before any weight is loaded (a 3.3B model takes minutes to read,
and may not fit at all), yet parameter counts written out by hand per family drift from
what transformers builds: tied embeddings, shared encoder/decoder tables, T5's
relative-position tables. Built on the meta device, the model has every module and shape
and no storage, so the counts are the real model's, at no memory cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.core.model.blocks import ShardUnits, shard_units
from workbench.errors import WorkbenchError


@dataclass(frozen=True)
class ParameterCounts:
    """The model's parameters, and those a LoRA run would train."""

    total: int
    #: Parameters the run trains: every one, or the adapters' with LoRA.
    trainable: int
    #: The linear layers the adapters go on (empty without LoRA).
    adapted_layers: int = 0
    #: Their input widths, summed: what the adapters' own activations scale with.
    adapted_inputs: int = 0
    #: The largest block and the root, the units a ``--shard`` run gathers whole.
    units: ShardUnits = field(default_factory=ShardUnits)


def meta_model(model_config: Any) -> Any:
    """The model of ``model_config`` (seq2seq or causal), with no storage behind its
    tensors."""
    import torch

    from workbench.core.model.architecture import model_class

    with torch.device("meta"):
        return model_class(model_config).from_config(model_config)


def lora_layers(model: Any, targets: tuple[str, ...]) -> list[tuple[str, int, int]]:
    """``(name, in, out)`` of each linear layer whose last name is one of ``targets``, as
    peft matches a list of target names; one line listing the layer names there are when
    a target matches none."""
    import torch

    linear = [(n, m) for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    found = [(n, m.in_features, m.out_features) for n, m in linear if n.split(".")[-1] in targets]
    matched = {n.split(".")[-1] for n, _, _ in found}
    missing = [t for t in targets if t not in matched]
    if missing:
        names = sorted({n.split(".")[-1] for n, _ in linear})
        raise WorkbenchError(
            f"--lora-targets names {', '.join(missing)}, which no linear layer of this "
            f"{model.config.model_type} model is called; its linear layers are: "
            f"{', '.join(names)}"
        )
    return found


def count_parameters(
    model_config: Any, lora_targets: tuple[str, ...] | None = None, rank: int = 8
) -> ParameterCounts:
    """The parameters of ``model_config``'s model, and with ``lora_targets`` those that
    rank-``rank`` adapters add and train (``rank × (in + out)`` a layer, as LoRA's A and B
    matrices have); and the units a sharded run gathers whole."""
    model = meta_model(model_config)
    total = sum(p.numel() for p in model.parameters())  # a tied table counts once
    if lora_targets is None:
        return ParameterCounts(total=total, trainable=total, units=shard_units(model))
    layers = lora_layers(model, lora_targets)
    added = [(name, rank * (fan_in + fan_out)) for name, fan_in, fan_out in layers]
    return ParameterCounts(
        total=total,
        trainable=sum(count for _, count in added),
        adapted_layers=len(layers),
        adapted_inputs=sum(fan_in for _, fan_in, _ in layers),
        units=shard_units(model, added),
    )
