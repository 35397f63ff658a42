"""The "before" translations of a model as loaded, kept across runs.

Every new run of the same model on the same held-out sets (a rerun, each trial of a
sweep) would decode the same sentences with the same weights and the same options, and
get the same translations: minutes of beam search on a CPU for the assignment's sets.
They are kept under ``$WORKBENCH_CACHE/before``, one file per key, where the key is the
digest of everything that decides them: every weight of the model (its bytes), the
tokenizer's files, the direction, the decoding options and batch size, the device type,
the torch and transformers versions, and the sources in order. A change to any of them
is another key, so such a run decodes again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from workbench.core.atomic import write_json
from workbench.core.cache_root import cache_folder
from workbench.core.cache_use import using
from workbench.core.data.tokenize import tokenizer_files_digest
from workbench.core.model.fingerprint import weights_digest
from workbench.core.records.files import read_json_dict
from workbench.core.records.typed import decode


@dataclass(frozen=True)
class KeptBefore:
    """One kept file: a set's "before" translations, in the order of its sources."""

    translations: list[str]


def before_root() -> Path:
    """``$WORKBENCH_CACHE/before``, or ``~/.cache/workbench/before``."""
    return cache_folder("before")


def decoding_key(translator: Any, options: Any, batch_size: int) -> str:
    """The part of the key the sets share: the model, tokenizer, direction and decoding
    (see :func:`set_key` for one set's)."""
    model = translator.model
    parts = [
        weights_digest(model),
        tokenizer_files_digest(translator.tokenizer),
        translator.direction.source_text(""),
        getattr(translator.tokenizer, "src_lang", None),
        getattr(translator.tokenizer, "tgt_lang", None),
        translator.max_source_length,
        vars(options),
        batch_size,
        next(model.parameters()).device.type,
        metadata.version("torch"),
        metadata.version("transformers"),
    ]
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def set_key(decoding: str, sources: str) -> str:
    """One set's key: the shared part and the digest of its sources in order."""
    return hashlib.sha256(f"{decoding}:{sources}".encode()).hexdigest()[:32]


def kept_file(key: str) -> Path:
    """The file one set's translations are kept in."""
    return before_root() / f"{key}.json"


def cached_before(key: str, count: int) -> list[str] | None:
    """The translations kept under ``key``, if there are ``count`` of them."""
    path = kept_file(key)
    with using(path):
        kept = decode(KeptBefore, read_json_dict(path))
    return kept.translations if kept is not None and len(kept.translations) == count else None


def keep_before(key: str, translations: list[str]) -> None:
    """Keep one set's translations under ``key`` (atomically: a reader sees all or none)."""
    path = kept_file(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with using(path):
        write_json(path, asdict(KeptBefore(translations)))
