"""Where the workbench keeps what it can build again: ``$WORKBENCH_CACHE``, by default
``~/.cache/workbench``, one folder per kind (Hub samples, prepared data, "before"
translations, ranked preference lines). Everything under it may be deleted at any time;
the next run builds it again. ``workbench cache`` lists it and ``workbench cache prune``
frees it (:mod:`workbench.core.caches`), never taking what a live run or a reading process
uses (:mod:`workbench.core.cache_use`)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$WORKBENCH_CACHE``, or ``~/.cache/workbench`` when it is unset or empty."""
    return Path(os.environ.get("WORKBENCH_CACHE") or Path.home() / ".cache" / "workbench")


def cache_folder(kind: str) -> Path:
    """The folder of one kind of cache entry under :func:`cache_root` (not created)."""
    return cache_root() / kind
