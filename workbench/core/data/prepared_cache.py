"""The cache of prepared data: a run's cleaned, split and tokenized pairs, kept on disk so
the next run of the same data and model (a new run, a ``--resume``, a sweep trial, another
DDP rank) starts training in seconds instead of preparing again.

An entry is a folder named by the digest of everything that decides its contents
(:func:`cache_key`): the data's identity (path, size and modification time of each file,
or the rows themselves for a Hub sample), the cleaning rules and their settings, the
tokenizer's fingerprint, the lengths, the seed and the split. Change any of them and the
key changes, so the data is prepared again; nothing is ever looked up by name alone.

An entry is built in a hidden sibling folder and renamed into place when whole, with
``done.json`` listing its files and sizes; an entry whose files do not match it (a disk
that filled up, a file deleted by hand) is torn: it is removed and built again. Entries
live under ``$WORKBENCH_CACHE/prepared`` (default ``~/.cache/workbench/prepared``);
deleting that folder, or any entry in it, is always safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

from workbench.core.atomic import fsync_tree, write_json, write_text
from workbench.core.cache_root import cache_folder

#: Bumped whenever preparing the same inputs would give other contents.
PREPARED_VERSION = 1
DONE_FILE = "done.json"
TRAIN_FILE = "train.arrow"
HELD_OUT_FILE = "held_out.json"
_BUILDING = ".building-"


def prepared_root() -> Path:
    """``$WORKBENCH_CACHE/prepared``, or ``~/.cache/workbench/prepared``."""
    return cache_folder("prepared")


def file_identity(path: Path) -> list[Any]:
    """A file's (or a folder's files') resolved path, size and modification time."""
    path = path.expanduser().resolve()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    found = []
    for file in files:
        stat = file.stat()
        found.append([str(file), stat.st_size, stat.st_mtime_ns])
    return found


def content_digest(rows: Any) -> str:
    """A digest of pairs' texts, for data with no file to name it (a Hub sample)."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(row.source.encode())
        digest.update(b"\x00")
        digest.update(row.target.encode())
        digest.update(b"\x01")
    return digest.hexdigest()


def cache_key(parts: dict[str, Any]) -> str:
    """The entry name for ``parts``: what decides the prepared data."""
    text = json.dumps({"version": PREPARED_VERSION, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def find_entry(root: Path, key: str) -> tuple[Path | None, bool]:
    """The whole entry for ``key`` and whether a torn one was found (and removed)."""
    folder = root / key
    if not folder.exists():
        return None, False
    try:
        done = json.loads((folder / DONE_FILE).read_text(encoding="utf-8"))
        whole = all(
            (folder / name).is_file() and (folder / name).stat().st_size == size
            for name, size in done["files"].items()
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        whole = False
    if whole:
        return folder, False
    shutil.rmtree(folder, ignore_errors=True)
    return None, True


def new_build_folder(root: Path) -> Path:
    """A private folder to build an entry in; left-overs of dead builders are removed."""
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob(f"{_BUILDING}*"):
        pid = stale.name[len(_BUILDING) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    folder = root / f"{_BUILDING}{os.getpid()}-{secrets.token_hex(4)}"
    folder.mkdir()
    return folder


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def publish_entry(building: Path, root: Path, key: str, info: dict[str, Any]) -> Path:
    """Seal ``building`` (``done.json`` with its files' sizes) and move it to its key.

    Another process that prepared the same key first wins; this one's copy is dropped.
    """
    files = {p.name: p.stat().st_size for p in sorted(building.iterdir()) if p.is_file()}
    write_json(building / DONE_FILE, {"files": files, **info})
    fsync_tree(building)
    target = root / key
    try:
        building.rename(target)
    except OSError:  # another process published it meanwhile
        shutil.rmtree(building, ignore_errors=True)
    return target


#: Where aliases live: the key a tokenizer-less lookup computes -> the entry a run made.
ALIASES = "aliases"


def write_alias(root: Path, alias: str, key: str) -> None:
    """Let a lookup by ``alias`` find the entry ``key`` (see :func:`read_alias`)."""
    folder = root / ALIASES
    folder.mkdir(parents=True, exist_ok=True)
    write_text(folder / alias, key)


def read_alias(root: Path, alias: str) -> str | None:
    """The entry an alias names, or None."""
    try:
        name = (root / ALIASES / alias).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return name if name and "/" not in name and not name.startswith(".") else None
