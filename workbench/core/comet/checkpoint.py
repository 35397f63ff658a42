"""Reading a COMET checkpoint: Lightning's pickled dict, its weights and its settings.

Unbabel's ``checkpoints/model.ckpt`` is what PyTorch Lightning saves: a dict whose
``state_dict`` holds ``encoder.model.*`` (a Hugging Face XLM-R without its pooler),
``layerwise_attention.*`` and ``estimator.ff.*``, and whose ``hyper_parameters`` holds the
model's settings. torch >= 2.6 reads such a file only with ``weights_only=False``, which
runs what the pickle names: :mod:`.files` says why that is only done for a model the user
named. The file is memory-mapped, so a 2.3 GB checkpoint is not read into memory twice.
"""

from __future__ import annotations

import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError

#: What every key of the encoder's weights starts with in a COMET state dict.
ENCODER_PREFIX = "encoder.model."


@dataclass(frozen=True)
class CometCheckpoint:
    """The weights and settings a COMET checkpoint holds."""

    path: Path
    state_dict: dict[str, Any]  # tensors by Lightning's names
    hyper_parameters: dict[str, Any] | None  # None when the file has none

    def encoder_weights(self) -> dict[str, Any]:
        """The encoder's tensors under transformers' own names (prefix dropped)."""
        cut = len(ENCODER_PREFIX)
        return {k[cut:]: v for k, v in self.state_dict.items() if k.startswith(ENCODER_PREFIX)}


def read_checkpoint(path: Path) -> CometCheckpoint:
    """The checkpoint at ``path``; one line when it is truncated or not a COMET checkpoint."""
    import torch

    fix = "download the model again, or pass the folder of a COMET model"
    try:
        data = torch.load(path, map_location="cpu", weights_only=False, mmap=True)
    except (RuntimeError, EOFError, OSError, pickle.UnpicklingError, zipfile.BadZipFile) as err:
        reason = " ".join(str(err).split())[:100] or type(err).__name__
        raise WorkbenchError(
            f"'{path}' is not a readable checkpoint (truncated or not a torch file: "
            f"{reason}); {fix}"
        ) from None
    state = data.get("state_dict") if isinstance(data, dict) else None
    if not isinstance(state, dict) or not any(k.startswith(ENCODER_PREFIX) for k in state):
        raise WorkbenchError(
            f"'{path}' is not a COMET checkpoint (no Lightning state_dict with "
            f"{ENCODER_PREFIX}* weights); {fix}"
        )
    hyper = data.get("hyper_parameters")
    return CometCheckpoint(path, state, dict(hyper) if isinstance(hyper, dict) else None)
