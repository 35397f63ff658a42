"""The local cache of Hub rows: one JSONL file per (what was read, commit), so a rerun
needs no network at all."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path
from urllib.parse import quote, unquote

from workbench.core.atomic import write_text
from workbench.core.data.sample_plan import MAX_ROWS_PER_GROUP, HubPair, HubRows

#: The revision part of a cache file's name when the rows came from a plain filesystem.
UNPINNED = "unpinned"


def default_cache_dir() -> Path:
    """Where samples are cached: ``$WORKBENCH_CACHE`` or ``~/.cache/workbench``."""
    root = os.environ.get("WORKBENCH_CACHE") or Path.home() / ".cache" / "workbench"
    return Path(root) / "samples"


def sample_stem(repo: str, config: str | None, src: str, tgt: str, n: int, seed: int) -> str:
    # The cap is in the name: a sample drawn under another scheme is another sample.
    return (
        f"{repo.replace('/', '--')}-{config or 'default'}-{src}-{tgt}-n{n}-seed{seed}"
        f"-cap{MAX_ROWS_PER_GROUP}"
    )


def split_stem(repo: str, config: str | None, split: str, src: str, tgt: str) -> str:
    return f"{repo.replace('/', '--')}-{config or 'default'}-{split}-{src}-{tgt}"


def cache_file(cache_dir: Path, stem: str, revision: str | None) -> Path:
    # ``name@sha.jsonl``, as the Hub writes ``repo@revision``; quoted so a branch such as
    # "refs/pr/1" stays one file name.
    return cache_dir / f"{stem}@{quote(revision, safe='') if revision else UNPINNED}.jsonl"


def find_cached(cache_dir: Path, stem: str, revision: str | None) -> Path | None:
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
    cache_dir: Path,
    repo: str,
    config: str | None,
    source_lang: str,
    target_lang: str,
    n: int,
    seed: int,
    revision: str | None = None,
) -> Path | None:
    """The cached sample at ``revision``; with None, the newest one at any revision."""
    stem = sample_stem(repo, config, source_lang, target_lang, n, seed)
    return find_cached(cache_dir, stem, revision)


def find_cached_split(
    cache_dir: Path,
    repo: str,
    config: str | None,
    split: str,
    source_lang: str,
    target_lang: str,
    revision: str | None = None,
) -> Path | None:
    """The cached split at ``revision``; with None, the newest one at any revision."""
    stem = split_stem(repo, config, split, source_lang, target_lang)
    return find_cached(cache_dir, stem, revision)


def read_cached(path: Path) -> HubRows:
    """The rows of a cache file and the revision they were read at."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return HubRows([HubPair(r["source"], r["target"]) for r in rows], cached_revision(path))


def write_cached(path: Path, pairs: list[HubPair]) -> None:
    """Write ``pairs`` as JSONL through the one atomic writer (temporary file, fsync,
    rename): a half-written sample is never taken for a whole one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(
        path,
        "".join(
            json.dumps({"source": p.source, "target": p.target}, ensure_ascii=False) + "\n"
            for p in pairs
        ),
    )
