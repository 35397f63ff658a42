"""Which MetricX model a name means, what it can score, and where its tokenizer is.

A value that looks like a path is only ever a folder (a ``save_pretrained`` folder:
``config.json`` and the weights); a Hub id is read from the local cache first, so a
checkpoint fetched once scores offline, and fetched otherwise through the same checks,
retries and one-line errors as every other Hub access.

**Reference-based or QE.** A checkpoint does not say which it was trained for: its config
is plain mT5's. MetricX-24's published checkpoints are hybrid (one model, both modes),
while MetricX-23 published separate QE checkpoints (``metricx-23-qe-*``) and
reference-based ones (``metricx-23-*``), with input strings of their own. So the mode is
read from the name, as the published ones are named: a name with ``metricx-23-qe`` is a
MetricX-23 QE model, refused as reference-based; one with ``metricx-23`` otherwise is a
MetricX-23 reference-based model, refused as QE; any other is MetricX-24 (hybrid). A
local copy keeps its repo's folder name (the Hub cache does), or is read as MetricX-24.

**The tokenizer.** MetricX's checkpoints hold none: its README runs them with
``--tokenizer google/mt5-xl``. The tokenizer is the one given (``--metricx-tokenizer``),
else one saved in the model's folder (``spiece.model``), else google/mt5-xl from the Hub
cache (or the Hub); none found is one line naming the fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.config.settings import DEFAULT_METRICX, DEFAULT_METRICX_TOKENIZER
from workbench.core.data.hub_requests import cached_or_fetched
from workbench.core.data.sources import looks_like_local_path
from workbench.core.metricx.checkpoint import FOLDER_FILES
from workbench.core.metricx.network import read_config
from workbench.errors import WorkbenchError

#: The tokenizer MetricX's README runs every checkpoint with.
DEFAULT_TOKENIZER = DEFAULT_METRICX_TOKENIZER
#: A tokenizer in a folder: the SentencePiece model mT5's tokenizer reads.
TOKENIZER_FILES = ("spiece.model", "tokenizer.json")


@dataclass(frozen=True)
class Edition:
    """A MetricX generation: its name, the modes its checkpoint does, and its inputs."""

    name: str  # "MetricX-24"
    reference: bool  # scores against a reference
    qe: bool  # scores without one
    max_length: int  # the input length it was trained with
    source_in_reference_mode: bool  # MetricX-23's reference mode reads no source

    def input_text(self, source: str, hypothesis: str, reference: str | None) -> str:
        """The model's input, as its ``predict.py`` builds it."""
        if self.name == "MetricX-23":
            if reference is None:
                return f"candidate: {hypothesis} source: {source}"
            return f"candidate: {hypothesis} reference: {reference}"
        text = f"source: {source} candidate: {hypothesis}"
        return text if reference is None else f"{text} reference: {reference}"


METRICX_24 = Edition("MetricX-24", True, True, 1536, True)
METRICX_23 = Edition("MetricX-23", True, False, 1024, False)
METRICX_23_QE = Edition("MetricX-23", False, True, 1024, False)


def edition_of(name: str) -> Edition:
    """The edition a model's name says (the module docstring says why by name)."""
    lowered = name.lower()
    if re.search(r"metricx-?23-?qe", lowered):
        return METRICX_23_QE
    if re.search(r"metricx-?23", lowered):
        return METRICX_23
    return METRICX_24


@dataclass(frozen=True)
class MetricXSource:
    """A MetricX model the user named: its folder on disk and its config as written."""

    name: str  # as given: a Hub id or a folder
    folder: Path
    config: dict[str, Any]

    @property
    def what(self) -> str:
        """``MetricX model 'google/…'``: the model in an error's words."""
        return f"MetricX model '{self.name}'"

    @property
    def edition(self) -> Edition:
        """What it can score, and how its inputs are written."""
        if not looks_like_local_path(self.name):
            return edition_of(self.name)
        folder = self.folder.resolve()  # a Hub cache snapshot: models--google--…/snapshots/…
        return edition_of(
            folder.parent.parent.name if folder.parent.name == "snapshots" else folder.name
        )

    def check_mode(self, qe: bool) -> None:
        """One line when the checkpoint cannot score in the mode asked."""
        edition = self.edition
        if qe and not edition.qe:
            raise WorkbenchError(
                f"{self.what} is a reference-based {edition.name} checkpoint, so it cannot "
                "score without references (QE); use a MetricX-23 QE checkpoint "
                "(google/metricx-23-qe-large-v2p0) or a MetricX-24 hybrid one "
                f"({DEFAULT_METRICX})"
            )
        if not qe and not edition.reference:
            raise WorkbenchError(
                f"{self.what} is a QE {edition.name} checkpoint: it scores without references "
                "and was not trained with them; score with it as metricx-qe, or use a "
                f"reference-based checkpoint ({DEFAULT_METRICX})"
            )


def locate(name: str) -> MetricXSource:
    """The MetricX model ``name`` names, its config read (its weights not yet)."""
    if looks_like_local_path(name):
        folder = Path(name).expanduser()
        if not folder.is_dir():
            raise WorkbenchError(
                f"MetricX model folder '{folder}' does not exist; pass a folder with "
                f"config.json and the weights, or a Hub id such as {DEFAULT_METRICX}"
            )
    else:
        folder = Path(_snapshot(name, FOLDER_FILES, f"MetricX model '{name}'"))
    source = MetricXSource(name, folder, {})
    return MetricXSource(name, folder, read_config(folder, source.what))


def fetch_weights(source: MetricXSource) -> None:
    """A Hub checkpoint's ``pytorch_model.bin`` files, where it has no safetensors."""
    from workbench.core.metricx.checkpoint import weight_files

    if looks_like_local_path(source.name):
        return
    try:
        weight_files(source.folder)
    except WorkbenchError:
        _snapshot(source.name, ["pytorch_model.bin", "pytorch_model*.bin*"], source.what)


def tokenizer_location(source: MetricXSource, tokenizer: str | None) -> str:
    """Where the tokenizer is: as given, else the model's folder, else google/mt5-xl."""
    if tokenizer:
        if looks_like_local_path(tokenizer) and not Path(tokenizer).expanduser().is_dir():
            raise WorkbenchError(
                f"MetricX tokenizer folder '{tokenizer}' does not exist; pass a folder with "
                f"spiece.model, or a Hub id such as {DEFAULT_TOKENIZER}"
            )
        return tokenizer
    if any((source.folder / f).is_file() for f in TOKENIZER_FILES):
        return str(source.folder)
    if looks_like_local_path(source.name):
        raise WorkbenchError(
            f"{source.what} has no tokenizer in its folder (no spiece.model); pass "
            f"--metricx-tokenizer {DEFAULT_TOKENIZER} (MetricX's README uses it) or a folder "
            "holding mT5's spiece.model"
        )
    return DEFAULT_TOKENIZER


def load_tokenizer(where: str) -> Any:
    """mT5's tokenizer from a folder, the Hub cache or the Hub."""
    from transformers import AutoTokenizer

    from workbench.core.model.load import quiet_libraries

    quiet_libraries()
    if looks_like_local_path(where):
        if not any((Path(where).expanduser() / f).is_file() for f in TOKENIZER_FILES):
            raise WorkbenchError(
                f"'{where}' holds no tokenizer (no spiece.model or tokenizer.json); pass "
                f"--metricx-tokenizer {DEFAULT_TOKENIZER} or a folder holding mT5's spiece.model"
            )
        return AutoTokenizer.from_pretrained(str(Path(where).expanduser()))
    return cached_or_fetched(
        lambda **options: AutoTokenizer.from_pretrained(where, **options),
        f"MetricX tokenizer '{where}'",
        f"check the id, or pass --metricx-tokenizer FOLDER (MetricX uses {DEFAULT_TOKENIZER})",
    )


def _snapshot(repo_id: str, patterns: list[str], what: str) -> str:
    """The local folder of a Hub repo's files matching ``patterns`` (cache first)."""
    from huggingface_hub import snapshot_download

    return str(
        cached_or_fetched(
            lambda **options: snapshot_download(repo_id, allow_patterns=patterns, **options),
            what,
            f"check the id (such as {DEFAULT_METRICX}) or pass a local folder",
        )
    )
