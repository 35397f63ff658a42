"""Reading a COMET checkpoint: Lightning's pickled dict, its weights and its settings.

Unbabel's ``checkpoints/model.ckpt`` is what PyTorch Lightning saves: a dict whose
``state_dict`` holds ``encoder.model.*`` (a Hugging Face XLM-R without its pooler),
``layerwise_attention.*`` and ``estimator.ff.*``, and whose ``hyper_parameters`` holds the
model's settings. It is read as plain tensors first; a file that names other classes
needs ``weights_only=False``, which runs what the pickle names: :mod:`.files` says why
that is only done for a model the user named. The file is memory-mapped, so a 2.3 GB
checkpoint is not read into memory twice.
"""

from __future__ import annotations

import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.records.typed import decode
from workbench.errors import WorkbenchError

#: What every key of the encoder's weights starts with in a COMET state dict.
ENCODER_PREFIX = "encoder.model."


@dataclass(frozen=True)
class LightningFile:
    """What a COMET model needs of the dict Lightning saves (its epoch, optimizer states
    and the rest are left), each as found: :func:`read_checkpoint` checks the weights, and
    the settings are checked where they are read (:mod:`.settings`)."""

    state_dict: Any = None  # tensors by Lightning's names
    hyper_parameters: Any = None


@dataclass(frozen=True)
class CometCheckpoint:
    """The weights and settings a COMET checkpoint holds."""

    path: Path
    state_dict: dict[str, Any]  # tensors by Lightning's names
    hyper_parameters: dict[str, Any] | None  # None when the file has none


def _load(path: Path, weights_only: bool) -> Any:
    """``torch.load`` of the file, memory-mapped where its format allows (a zip file, as
    torch has saved since 1.6; an older file is read whole)."""
    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=weights_only, mmap=True)
    except RuntimeError as err:
        if "mmap can only be used" not in str(err):
            raise
        return torch.load(path, map_location="cpu", weights_only=weights_only)


def read_checkpoint(path: Path) -> CometCheckpoint:
    """The checkpoint at ``path``; one line when it is truncated or not a COMET checkpoint.

    Read first as plain tensors and containers (``weights_only=True``: nothing in the file
    runs), which Lightning's COMET checkpoints are; only a file that names other classes is
    read with ``weights_only=False``, as unbabel-comet reads every one, and only because the
    user named this model (:mod:`.files`).
    """
    fix = "download the model again, or pass the folder of a COMET model"
    try:
        try:
            data = _load(path, weights_only=True)
        except pickle.UnpicklingError as err:
            if "weights only load failed" not in str(err).lower():
                raise
            data = _load(path, weights_only=False)
    except ModuleNotFoundError as err:
        raise WorkbenchError(
            f"'{path}' names the Python module '{err.name}', which is not installed here; "
            f"install it, or {fix}"
        ) from None
    except (AttributeError, ImportError) as err:  # a class its installed module lacks
        raise WorkbenchError(
            f"'{path}' names a Python class this machine's packages lack ({err}); install "
            f"the version of the package it was saved with, or {fix}"
        ) from None
    except (RuntimeError, EOFError, OSError, pickle.UnpicklingError, zipfile.BadZipFile) as err:
        reason = " ".join(str(err).split())[:100] or type(err).__name__
        raise WorkbenchError(
            f"'{path}' is not a readable checkpoint (truncated or not a torch file: "
            f"{reason}); {fix}"
        ) from None
    saved = decode(LightningFile, data) or LightningFile()  # not a dict: read as empty
    state = saved.state_dict
    if not isinstance(state, dict) or not any(k.startswith(ENCODER_PREFIX) for k in state):
        raise WorkbenchError(
            f"'{path}' is not a COMET checkpoint (no Lightning state_dict with "
            f"{ENCODER_PREFIX}* weights); {fix}"
        )
    hyper = saved.hyper_parameters
    return CometCheckpoint(path, state, dict(hyper) if isinstance(hyper, dict) else None)
