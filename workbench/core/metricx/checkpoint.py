"""A MetricX checkpoint's tensors, read into the network in the dtype they were saved in.

The published checkpoints are ``save_pretrained`` folders: ``model.safetensors`` or
``pytorch_model.bin``, either one file or shards listed by an ``*.index.json``. The
reference loads them with ``torch_dtype="auto"``, so a ``-bfloat16`` checkpoint runs in
bf16 and the others in fp32: the tensors are assigned as they are, never cast. A
``.bin`` file is read with ``weights_only=True`` (plain tensors, no code run).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.run_folder.layout import MODEL_CONFIG_FILE
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    import torch

#: Weight files, preferred first: (single file, index of shards).
WEIGHT_FILES = (
    ("model.safetensors", "model.safetensors.index.json"),
    ("pytorch_model.bin", "pytorch_model.bin.index.json"),
)
#: Patterns of every file a MetricX model folder needs (what is fetched from the Hub).
FOLDER_FILES = [MODEL_CONFIG_FILE, "*.safetensors", "*.safetensors.index.json"]
#: Tensors a checkpoint may hold that MetricX's network does not read: the shared
#: embedding's other two names, and a bias some T5 conversions kept.
IGNORED = (
    "encoder.embed_tokens.weight",
    "decoder.embed_tokens.weight",
    "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",
)


def weight_files(folder: Path) -> list[Path]:
    """The checkpoint's weight files; one line when the folder holds none."""
    for single, index in WEIGHT_FILES:
        if (folder / single).is_file():
            return [folder / single]
        if (folder / index).is_file():
            shards = json.loads((folder / index).read_text(encoding="utf-8"))["weight_map"]
            return [folder / name for name in sorted(set(shards.values()))]
    raise WorkbenchError(
        f"'{folder}' has a config.json but no model.safetensors or pytorch_model.bin; copy "
        "the MetricX checkpoint's folder whole, or pass its Hub id"
    )


def read_tensors(files: list[Path]) -> dict[str, torch.Tensor]:
    """Every tensor of the checkpoint, by name, as saved."""
    import torch

    tensors: dict[str, torch.Tensor] = {}
    for path in files:
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file

            tensors.update(load_file(str(path)))
        else:
            tensors.update(torch.load(path, map_location="cpu", weights_only=True))
    return tensors


def load_weights(network: Any, folder: Path, what: str) -> str:
    """``network`` given the checkpoint's tensors; the dtype they hold (``float32``,
    ``bfloat16``). A tensor missing or of the wrong shape is one line."""
    tensors = {k: v for k, v in read_tensors(weight_files(folder)).items() if k not in IGNORED}
    expected = {k for k in network.state_dict() if k not in IGNORED}
    missing = sorted(expected - tensors.keys())
    if missing:
        raise WorkbenchError(
            f"{what} lacks {len(missing)} of MetricX's tensors (the first: {missing[0]}); "
            "pass a MetricX checkpoint (MT5ForRegression), copied whole"
        )
    shapes = network.state_dict()
    for name in expected:
        if tuple(tensors[name].shape) != tuple(shapes[name].shape):
            raise WorkbenchError(
                f"{what}: tensor {name} is {tuple(tensors[name].shape)} where its config.json "
                f"says {tuple(shapes[name].shape)}; copy the checkpoint's folder whole"
            )
    network.load_state_dict({k: tensors[k] for k in expected}, strict=False, assign=True)
    network.encoder.embed_tokens = network.decoder.embed_tokens = network.shared
    return str(tensors["shared.weight"].dtype).removeprefix("torch.")
