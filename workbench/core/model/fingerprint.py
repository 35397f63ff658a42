"""What a model is, as a digest of its weights: the key under which its outputs may be
kept (the "before" translations of :mod:`workbench.core.evaluate.before_cache`)."""

from __future__ import annotations

import hashlib
from typing import Any


def weights_digest(model: Any) -> str:
    """A digest of every parameter and buffer of ``model``: its names, shapes, dtypes
    and bytes (a fine-tuned model and its base differ in it; a seeded scratch model
    built twice does not)."""
    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype}".encode())
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        digest.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
    return digest.hexdigest()
