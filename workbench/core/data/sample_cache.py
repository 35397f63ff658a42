"""The local cache of Hub rows: one JSONL file per (what was read, commit), so a rerun
needs no network at all; and while a sample is being read, the row groups that have
arrived (:class:`PartialSample`), so an interrupted one resumes."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from workbench.core.atomic import write_bytes, write_text
from workbench.core.cache_root import cache_folder
from workbench.core.cache_use import using
from workbench.core.data.sample_plan import (
    MAX_ROWS_PER_GROUP,
    HubPair,
    HubRows,
    HubSample,
    HubSplit,
)

#: The revision part of a cache file's name when the rows came from a plain filesystem.
UNPINNED = "unpinned"


def default_cache_dir() -> Path:
    """Where samples are cached: ``$WORKBENCH_CACHE`` or ``~/.cache/workbench``."""
    return cache_folder("samples")


def sample_stem(sample: HubSample) -> str:
    """A sample's cache name: everything that chose its rows, so another draw is another file."""
    # The cap is in the name: a sample drawn under another scheme is another sample.
    return (
        f"{sample.repo.replace('/', '--')}-{sample.config or 'default'}-{sample.source_lang}"
        f"-{sample.target_lang}-n{sample.n}-seed{sample.seed}-cap{MAX_ROWS_PER_GROUP}"
    )


def split_stem(split: HubSplit) -> str:
    """The cache name of a whole split (a test set): read as it is, so no size or seed."""
    return (
        f"{split.repo.replace('/', '--')}-{split.config or 'default'}-{split.split}"
        f"-{split.source_lang}-{split.target_lang}"
    )


def cache_file(cache_dir: Path, stem: str, revision: str | None) -> Path:
    """The file of ``stem``'s rows as read at ``revision`` (``unpinned``: from a plain folder)."""
    # ``name@sha.jsonl``, as the Hub writes ``repo@revision``; quoted so a branch such as
    # "refs/pr/1" stays one file name.
    return cache_dir / f"{stem}@{quote(revision, safe='') if revision else UNPINNED}.jsonl"


def find_cached(cache_dir: Path, stem: str, revision: str | None) -> Path | None:
    """``stem``'s cache file at ``revision`` (None: the newest at any), or None if not cached."""
    if revision is not None:
        path = cache_file(cache_dir, stem, revision)
        return path if path.is_file() else None
    found = [p for p in cache_dir.glob(f"{glob.escape(stem)}@*.jsonl") if p.is_file()]
    return max(found, key=lambda p: p.stat().st_mtime, default=None)


def cached_revision(path: Path) -> str | None:
    """The revision a cache file was read at, from its name (None: a plain filesystem)."""
    token = path.name.removesuffix(".jsonl").rsplit("@", 1)[-1]
    return None if token == UNPINNED else unquote(token)


def find_cached_sample(
    cache_dir: Path, sample: HubSample, revision: str | None = None
) -> Path | None:
    """The cached sample at ``revision``; with None, the newest one at any revision."""
    return find_cached(cache_dir, sample_stem(sample), revision)


def find_cached_split(cache_dir: Path, split: HubSplit, revision: str | None = None) -> Path | None:
    """The cached split at ``revision``; with None, the newest one at any revision."""
    return find_cached(cache_dir, split_stem(split), revision)


def read_cached(path: Path) -> HubRows | None:
    """The rows of a cache file and the revision they were read at; None when the file
    has gone since it was found (pruned: the rows are read again)."""
    with using(path):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
    rows = [json.loads(line) for line in text.splitlines()]
    return HubRows([HubPair(r["source"], r["target"]) for r in rows], cached_revision(path))


def write_cached(path: Path, pairs: list[HubPair]) -> None:
    """Write ``pairs`` as JSONL through the one atomic writer (temporary file, fsync,
    rename): a half-written sample is never taken for a whole one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(
        json.dumps({"source": p.source, "target": p.target}, ensure_ascii=False) + "\n"
        for p in pairs
    )
    with using(path):
        write_text(path, text)


class PartialSample:
    """The row groups of a sample that have arrived, so that a run stopped half-way (a
    mirror that fails, Ctrl-C, ``kill -9``) fetches only the rest when run again.

    Keyed by dataset commit, file and row group: ``partial/<repo>@<sha>/<file>/`` holds
    ``footer.parquet`` (the file's parquet metadata, so the plan is made again without
    asking for it) and ``g<row group>.<src>-<tgt>.json`` (the rows the sample takes from
    that group, with their offsets). Each is written atomically, so a file that is there
    is whole; one that cannot be read is fetched again. Only a pinned commit gets one: at
    a branch or on a plain filesystem the bytes under a name may change.
    """

    def __init__(self, cache_dir: Path, repo: str, revision: str, root: str) -> None:
        self.folder = (
            cache_dir / "partial" / f"{repo.replace('/', '--')}@{quote(revision, safe='')}"
        )
        self.root = root.rstrip("/") + "/"
        self._used: list[Path] = []

    def _file_dir(self, path: str) -> Path:
        return self.folder / quote(path.removeprefix(self.root), safe="")

    def _group_file(self, path: str, group: int, languages: tuple[str, str]) -> Path:
        return self._file_dir(path) / f"g{group:06d}.{languages[0]}-{languages[1]}.json"

    def footer(self, path: str) -> Any | None:
        """The parquet metadata kept for ``path`` (a ``pyarrow`` ``FileMetaData``), or None."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        footer = self._file_dir(path) / "footer.parquet"
        if not footer.is_file():
            return None
        try:
            return pq.read_metadata(footer)
        except (OSError, pa.ArrowException):
            return None

    def keep_footer(self, path: str, metadata: Any) -> None:
        """Keep the parquet metadata of ``path``."""
        import io

        buffer = io.BytesIO()
        metadata.write_metadata_file(buffer)
        folder = self._file_dir(path)
        folder.mkdir(parents=True, exist_ok=True)
        write_bytes(folder / "footer.parquet", buffer.getvalue())

    def rows(
        self, path: str, group: int, offsets: list[int], languages: tuple[str, str]
    ) -> list[HubPair] | None:
        """The rows at ``offsets`` of row group ``group`` of ``path``, if they were kept."""
        where = self._group_file(path, group, languages)
        try:
            kept = json.loads(where.read_text(encoding="utf-8"))
            by_offset = {
                int(o): HubPair(*pair)
                for o, pair in zip(kept["offsets"], kept["pairs"], strict=True)
            }
            found = [by_offset[o] for o in offsets]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        self._used.append(where)
        return found

    def keep_rows(
        self,
        path: str,
        group: int,
        offsets: list[int],
        pairs: list[HubPair],
        languages: tuple[str, str],
    ) -> None:
        """Keep the rows read from row group ``group`` of ``path``, as soon as they arrive."""
        where = self._group_file(path, group, languages)
        where.parent.mkdir(parents=True, exist_ok=True)
        record = {"offsets": offsets, "pairs": [list(p) for p in pairs]}
        write_text(where, json.dumps(record, ensure_ascii=False))
        self._used.append(where)

    def forget_rows(self) -> None:
        """Remove the row groups this sample used, once the whole sample is cached (the
        footers stay: another seed's sample of the same commit plans from them)."""
        for path in self._used:
            path.unlink(missing_ok=True)
        self._used.clear()
