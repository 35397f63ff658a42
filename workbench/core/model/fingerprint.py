"""What a model is, as a digest: of a loaded model's weights, the key under which its
outputs may be kept (the "before" translations of
:mod:`workbench.core.evaluate.before_cache`); of a model folder's files, read without
loading the model (the attention views a report keeps,
:mod:`workbench.core.attention.kept_heatmaps`). Nothing here imports torch until a loaded
model is digested."""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
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


#: A file of at most this many bytes is hashed whole (under 0.05 s; 120 MiB took 0.28 s
#: on this project's 2-core machine); a bigger one by its header and :data:`SAMPLED_BLOCKS`
#: blocks spread evenly over the rest (0.015 s for 2 GiB, read from the page cache).
WHOLE_FILE_BYTES = 16 << 20
#: Blocks read of a bigger file, and their size: 4 MiB of a 2 GiB model.
SAMPLED_BLOCKS = 64
BLOCK_BYTES = 64 << 10


def folder_fingerprint(model_dir: Path) -> list[list[Any]]:
    """What a model folder holds, read from its files without loading it: each file's
    name, size and a digest of its content (:func:`content_digest`), in name order; empty
    when the folder is missing or empty.

    Two folders that hold the same model agree however they were copied (``cp -r`` and
    ``scp -r`` give the files new modification times); a model saved again with other
    weights of the same shapes (a resumed run's new best model) does not, although its
    header (tensor names, dtypes, shapes, offsets) and sizes are the same."""
    found = []
    for path in sorted(model_dir.iterdir()) if model_dir.is_dir() else []:
        with contextlib.suppress(OSError):  # a file that went meanwhile
            if path.is_file():
                size = path.stat().st_size
                found.append([path.name, size, content_digest(path, size)])
    return found


def content_digest(path: Path, size: int) -> str:
    """A sha256 of the file's bytes: all of them up to :data:`WHOLE_FILE_BYTES`, else its
    first block (with the whole header of a safetensors file) and :data:`SAMPLED_BLOCKS`
    blocks at even offsets after it. Training changes nearly every weight, and a LoRA
    merge every attention projection of every layer, so a new model of the same shapes
    changes sampled blocks too; reading 4 MiB of a 2 GiB model keeps the check cheap."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        if size <= WHOLE_FILE_BYTES:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
            return digest.hexdigest()
        head = max(BLOCK_BYTES, _safetensors_header_end(fh.read(8), size))
        fh.seek(0)
        digest.update(fh.read(head))
        span = max(0, size - head - BLOCK_BYTES)
        for i in range(SAMPLED_BLOCKS):
            fh.seek(head + span * i // (SAMPLED_BLOCKS - 1))
            digest.update(fh.read(BLOCK_BYTES))
    return digest.hexdigest()


def _safetensors_header_end(first: bytes, size: int) -> int:
    """Where a safetensors file's header ends (its first 8 bytes are the header's length,
    little-endian), or 0 for a file that is not one."""
    length = int.from_bytes(first, "little") if len(first) == 8 else 0
    return 8 + length if 0 < length < size - 8 else 0
