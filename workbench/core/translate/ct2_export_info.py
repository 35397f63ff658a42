"""What a CTranslate2 export holds besides the converted weights: the model's files it
copies, its vocabulary, and the record it is stamped with when complete
(``workbench_export.json``, :class:`ExportInfo`).

The record is written by :func:`~workbench.core.translate.ct2_export.export_ctranslate2`
and read back through the one decoder (:func:`~workbench.core.records.typed.decode`), so
its shape is stated once. Every field has a default that means "not recorded": a
hand-made or damaged export reads as a record that says little, and what needs a value
(the model's type, to translate with it) refuses it in one line where it is needed.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.records.model_settings import SETTINGS_FILE
from workbench.core.records.typed import decode

#: Written last into an export: what it was made from and how.
EXPORT_INFO = "workbench_export.json"
#: Copied into the export so it is self-contained for tokenizing and decoding defaults.
#: The tokenizer files are each family's: Marian ``vocab.json`` with ``source.spm`` and
#: ``target.spm``; NLLB and mBART-50 ``tokenizer.json`` with ``sentencepiece.bpe.model``;
#: M2M100 ``vocab.json`` with ``sentencepiece.bpe.model``; T5 ``tokenizer.json`` with
#: ``spiece.model``; Qwen ``tokenizer.json`` with ``vocab.json`` and ``merges.txt``;
#: Llama, Mistral and Gemma ``tokenizer.json`` with ``tokenizer.model``. A chat template
#: (the prompt of a chat model) is saved by transformers 5 as ``chat_template.jinja``,
#: by older versions as ``chat_template.json`` or inside ``tokenizer_config.json``.
COPIED_FILES = (
    "vocab.json",
    "source.spm",
    "target.spm",
    "tokenizer.json",
    "sentencepiece.bpe.model",
    "spiece.model",
    "merges.txt",
    "tokenizer.model",
    "chat_template.jinja",
    "chat_template.json",
    "added_tokens.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "generation_config.json",
    SETTINGS_FILE,
)


@dataclass(frozen=True)
class SourceFile:
    """One file an export was made from, as it was then: enough to tell a changed file
    (size and modification time, and the SHA-256 where the time differs)."""

    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class ExportInfo:
    """``workbench_export.json``: what an export was made from and how."""

    #: The model folder it was made from ("": not recorded).
    source: str = ""
    #: Each file that makes the model, by name (see
    #: :func:`~workbench.core.translate.ct2_export.fingerprint`).
    source_files: dict[str, SourceFile] = field(default_factory=dict)
    quantization: str = "?"
    #: The model's ``model_type``, as its config.json is ctranslate2's (None: not recorded).
    model_type: str | None = None
    max_positions: int | None = None  # None: relative positions (T5), or not recorded
    #: A decoder-only model, generated with ``ctranslate2.Generator``. Exports made before
    #: decoder-only models could be exported record nothing, and are all seq2seq.
    causal: bool = False
    #: The decoder's sliding window (0: none), past which a prompt is fed step by step.
    sliding_window: int = 0
    ctranslate2_version: str = ""
    created: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values, in the order the file lists them."""
        return dataclasses.asdict(self)


def read_export_info(export_dir: Path) -> ExportInfo:
    """The export's record; one with nothing recorded when the folder is not a complete
    export or its record is not a JSON object."""
    try:
        data = json.loads((export_dir / EXPORT_INFO).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return ExportInfo()
    return decode(ExportInfo, data) or ExportInfo()


def vocabulary_by_id(tokenizer: Any, size: int) -> list[str]:
    """The token of each of ``size`` embedding rows, in row order, as the tokenizer maps ids.

    Rows the tokenizer has no token of its own for (M2M100's ``madeupword`` padding past
    its codes, which it maps to ``<unk>``) get fairseq's placeholder names, so every row
    keeps its id and CTranslate2's vocabulary has no token twice.
    """
    tokens: list[str] = []
    seen: set[str] = set()
    placeholders = 0
    for token in tokenizer.convert_ids_to_tokens(list(range(size))):
        while token is None or token in seen:
            token = f"madeupword{placeholders}"
            placeholders += 1
        seen.add(token)
        tokens.append(token)
    return tokens


def read_vocabulary(export_dir: Path) -> list[str]:
    """The export's target vocabulary (a decoder-only model's only one), one token per
    embedding row, or [] when unreadable."""
    for name in ("target_vocabulary.json", "shared_vocabulary.json", "vocabulary.json"):
        try:
            tokens = json.loads((export_dir / name).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(tokens, list):
            return [str(t) for t in tokens]
    return []
