"""Where a COMET model's files are: a local folder in Unbabel's layout, or a Hub repo.

A value that looks like a path is only ever a path (as for translation models); a Hub id
is read from the local cache first, so a model fetched once scores offline, and through
the same checks, retries and one-line errors as every other Hub access. ``hparams.yaml``
is fetched alone first: it is all the memory plan needs, so the 2.3 GB checkpoint is
fetched only once the run is known to go ahead.

The checkpoint is a pickled Lightning file. It is read as plain tensors where it can be;
one that names other classes needs ``weights_only=False``, and unpickling then runs code
the file names (:mod:`.checkpoint`). So a checkpoint is read only from a folder the user
named or from the Hub repo the user named, never from a location found some other way
(see docs/metrics.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.comet.settings import (
    CHECKPOINT_FILE,
    DEFAULT_COMET,
    HPARAMS_FILE,
    CometSettings,
    merged_settings,
    read_hparams,
)
from workbench.core.data.hub import GatedOrPrivate, hub_endpoint
from workbench.core.data.hub_requests import hub_file
from workbench.core.data.sources import looks_like_local_path
from workbench.errors import WorkbenchError


@dataclass(frozen=True)
class CometSource:
    """A COMET model the user named, and its ``hparams.yaml`` read."""

    name: str  # as given: a Hub id, a folder, or the folder's checkpoints/model.ckpt
    folder: Path | None  # the local folder; None for a Hub repo
    hparams: dict[str, Any]  # hparams.yaml as written

    @property
    def what(self) -> str:
        """``COMET model 'Unbabel/wmt22-comet-da'``: the model in an error's words."""
        return f"COMET model '{self.name}'"

    def declared_settings(self) -> CometSettings:
        """The settings ``hparams.yaml`` declares, checked: what the memory plan reads, and
        a model the workbench cannot score refused before its checkpoint is fetched."""
        return merged_settings(self.hparams, None, self.what)

    def checkpoint(self) -> Path:
        """The checkpoint file, fetched from the Hub repo the user named if need be."""
        if self.folder is not None:
            path = self.folder / CHECKPOINT_FILE
            if not path.is_file():
                raise WorkbenchError(
                    f"'{self.folder}' has {HPARAMS_FILE} but no {CHECKPOINT_FILE}; copy the "
                    "model folder whole, or pass its Hub id"
                )
            return path
        return Path(_from_hub(self.name, CHECKPOINT_FILE))

    def encoder_folder(self, pretrained_model: str) -> str:
        """Where the encoder's config and tokenizer are: ``pretrained_model`` as a Hub id,
        or as a folder, looked for beside the model's own folder first and then, as
        unbabel-comet looks, from the current directory."""
        if not looks_like_local_path(pretrained_model):
            return pretrained_model
        given = Path(pretrained_model).expanduser()
        candidates = [given] if self.folder is None else [self.folder / given, given]
        for candidate in candidates:
            if candidate.is_dir():
                return str(candidate.resolve())
        raise WorkbenchError(
            f"{self.what} names its encoder '{pretrained_model}' (pretrained_model in "
            f"{HPARAMS_FILE}), which is no folder beside the model or here; set it to the "
            "folder of the encoder's config.json and tokenizer, or to its Hub id "
            "(xlm-roberta-large for COMET-22)"
        )


def locate(name: str) -> CometSource:
    """The COMET model ``name`` names, with its ``hparams.yaml`` read from disk or fetched."""
    if looks_like_local_path(name):
        path = Path(name).expanduser()
        if path.is_file() and path.suffix == ".ckpt":  # comet-score takes the file itself
            path = path.parent.parent
        if not path.is_dir():
            raise WorkbenchError(
                f"COMET model folder '{path}' does not exist; pass a folder with "
                f"{HPARAMS_FILE} and {CHECKPOINT_FILE}, or a Hub id such as {DEFAULT_COMET}"
            )
        return CometSource(name, path, read_hparams(path / HPARAMS_FILE))
    return CometSource(name, None, read_hparams(Path(_from_hub(name, HPARAMS_FILE))))


def _from_hub(repo_id: str, filename: str) -> str:
    """One file of a COMET Hub repo; a gated one (CometKiwi) says where its licence is."""
    what = f"COMET model '{repo_id}'"
    try:
        return hub_file(repo_id, filename, what, "check the id or pass a local folder")
    except GatedOrPrivate:
        page = f"{hub_endpoint()}/{repo_id}"
        raise WorkbenchError(
            f"{what} is gated: accept its licence at {page} with your Hub account, then set "
            "HF_TOKEN to a token of that account (or log in with `hf auth login`)"
        ) from None
