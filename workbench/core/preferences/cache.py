"""The cache of ranked lines: each training source's candidates and scores, kept so that
another run of the same model, data, candidates and ranker (another objective, another
beta, a ``--resume``, a sweep's trial) ranks nothing again.

An entry is a folder under ``$WORKBENCH_CACHE/preferences`` named by the digest of
everything that decides its lines (:func:`preference_key`): the model's identity (a
folder's files by path, size and modification time; a Hub id and revision), the engine
and the direction it translates with, the sources and references in order, the candidate
settings and seed, the decoding base, the batch and chunk sizes, the ranker's name and
model, and the torch and transformers versions. The ranked lines are what is kept, not
the choice an objective makes from them.

An entry is built in place and resumable: ``ranked.jsonl`` gets one chunk's lines in one
write, flushed to disk, as each chunk is ranked. A build that stops (a stop asked, a kill,
a full disk) leaves the chunks it finished; the next build with the same key keeps them,
cuts off a torn tail and any chunk it did not finish (so chunks fall where an unbroken
build's fall, and sampling is seeded per line: the lines come out identical), and goes on.
When every line is in, ``done.json`` seals the entry with its line count and size; only a
sealed entry whose file matches its seal is read whole, and one that does not match (a
file cut or edited by hand) is removed and built again. One process builds an entry at a
time (an ``flock`` on ``.lock``); another waits for it, then reads what it sealed.
Deleting the folder, or any entry in it, is always safe.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import IO, Any

from workbench.core.atomic import write_json
from workbench.core.cache_root import cache_folder
from workbench.core.data.prepared_cache import content_digest, file_identity
from workbench.core.preferences.records import RankedSource, json_line, ranked_source_of
from workbench.core.records.files import read_json_dict

#: Bumped whenever ranking the same inputs would give other lines.
PREFERENCES_VERSION = 1
RANKED_FILE = "ranked.jsonl"
DONE_FILE = "done.json"
LOCK_FILE = ".lock"


def preferences_root() -> Path:
    """``$WORKBENCH_CACHE/preferences``, or ``~/.cache/workbench/preferences``."""
    return cache_folder("preferences")


def model_identity(model: str, revision: str | None = None) -> list[Any]:
    """What names a model's weights: a local folder's (or file's) files by path, size and
    modification time, else the Hub id and the revision asked."""
    path = Path(model).expanduser()
    if path.exists():
        return ["files", file_identity(path)]
    return ["hub", model, revision]


def preference_key(parts: dict[str, Any]) -> str:
    """The entry name for ``parts`` (see :func:`key_parts`)."""
    versions = {name: _version(name) for name in ("torch", "transformers", "sacrebleu")}
    text = json.dumps(
        {"version": PREFERENCES_VERSION, "libraries": versions, **parts},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def key_parts(
    model: list[Any],
    translator: Any,
    pairs: Sequence[Any],
    settings: Any,
    base: Any,
    ranker: tuple[str, str | None],
    sizes: tuple[int, int],
) -> dict[str, Any]:
    """What decides an entry's lines: the model's identity (:func:`model_identity`), the
    engine, direction and source length ``translator`` translates with, the pairs' texts
    in order, the candidate ``settings``, the decoding ``base``, the ranker's (name,
    model) and the (batch, chunk) sizes."""
    direction = translator.direction
    return {
        "model": model,
        "engine": translator.backend.name,
        "direction": [direction.source_text(""), direction.target_label],
        # a source longer than this is translated in pieces, so its candidates differ
        "max_source_length": translator.max_source_length,
        "pairs": [len(pairs), content_digest(pairs)],
        "candidates": asdict(settings),
        "decoding": vars(base),
        "ranker": list(ranker),
        "sizes": list(sizes),
    }


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


class PreferenceEntry:
    """One entry of the cache: its sealed lines, or the whole chunks a build left."""

    def __init__(self, root: Path, key: str) -> None:
        self.folder = root / key
        self.ranked = self.folder / RANKED_FILE
        self.done = self.folder / DONE_FILE

    def sealed(self) -> list[RankedSource] | None:
        """Every line of a sealed entry whose file matches its seal, else None; an entry
        sealed but torn (its file cut or edited) is removed, to be built again."""
        seal = read_json_dict(self.done)
        if seal is None:
            return None
        lines = self._read(seal.get("bytes"))
        if lines is not None and len(lines) == seal.get("lines"):
            return lines
        shutil.rmtree(self.folder, ignore_errors=True)
        return None

    def _read(self, size: object) -> list[RankedSource] | None:
        try:
            data = self.ranked.read_bytes()
        except OSError:
            return None
        if len(data) != size or (data and not data.endswith(b"\n")):
            return None
        found = whole_lines(data)
        return [line for line, _ in found] if data.count(b"\n") == len(found) else None

    def kept(self, chunk: int) -> list[RankedSource]:
        """The lines of the whole chunks an unsealed build left, the file cut to them (a
        torn tail and a chunk left half-written are dropped)."""
        try:
            data = self.ranked.read_bytes()
        except OSError:
            return []
        found = whole_lines(data)
        found = found[: len(found) - len(found) % chunk]
        with self.ranked.open("r+b") as fh:
            fh.truncate(sum(size for _, size in found))
        return [line for line, _ in found]

    def append(self, lines: Sequence[RankedSource]) -> None:
        """Add one chunk's lines in one write, flushed to disk before the next is ranked."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.ranked.open("ab") as fh:
            fh.write("".join(json_line(line) for line in lines).encode())
            fh.flush()
            os.fsync(fh.fileno())

    def seal(self, count: int) -> None:
        """Mark the entry whole: ``count`` lines, and the file's size, in ``done.json``."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.ranked.touch()
        write_json(self.done, {"lines": count, "bytes": self.ranked.stat().st_size})

    @contextmanager
    def building(self) -> Iterator[IO[str] | None]:
        """The right to build this entry: an exclusive ``flock`` on its ``.lock``, or None
        while another process holds it (the caller waits and tries again)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / LOCK_FILE).open("a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield None
                return
            except OSError:  # a file system without locks (Lustre without -o flock)
                yield fh  # built unlocked, as every cache of the workbench is there
                return
            try:
                yield fh
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


def whole_lines(data: bytes) -> list[tuple[RankedSource, int]]:
    """The ranked lines of ``data``, each with its size in bytes (its newline counted), up
    to the first that is torn or not one."""
    lines = []
    for raw in data.split(b"\n")[:-1]:  # what follows the last newline is torn
        try:
            line = ranked_source_of(raw.decode("utf-8"))
        except UnicodeDecodeError:
            line = None
        if line is None:
            break
        lines.append((line, len(raw) + 1))
    return lines
