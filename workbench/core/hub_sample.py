"""A seeded random sample of a Hub translation dataset without downloading all of it.

WMT19 zh-en's train split is ~26M rows in 13 parquet files ordered by source corpus
(UN, CWMT, news commentary, ...), so its first N rows, or a streaming shuffle buffer, all
come from one domain. Instead we read each file's parquet footer (a few KB by range
request through ``HfFileSystem``) and sample in two stages:

1. **Stratify by file**: each file gets ``n * rows_in_file / total_rows`` of the sample
   (largest remainder), so every file -- every domain -- is represented in proportion.
2. **Random row groups, then random rows**: within a file, row groups are taken in a
   seeded random order until they hold ``OVERSAMPLE`` times the file's quota, and the
   quota is drawn uniformly without replacement from those rows.

Only the chosen row groups' ``translation`` column is downloaded. When the pool covers
every row group, this is exact uniform sampling without replacement within each file.
The sample is cached as JSONL, so a rerun downloads nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from workbench.core.data import Pair
from workbench.core.hub import ensure_hub_reachable, unreachable
from workbench.errors import WorkbenchError

#: Row groups per file are read until they hold this many times the file's quota.
OVERSAMPLE = 4


def default_cache_dir() -> Path:
    """Where samples are cached: ``$WORKBENCH_CACHE`` or ``~/.cache/workbench``."""
    root = os.environ.get("WORKBENCH_CACHE") or Path.home() / ".cache" / "workbench"
    return Path(root) / "samples"


def allocate(n: int, sizes: list[int]) -> list[int]:
    """Split ``n`` over strata in proportion to ``sizes`` (largest remainder method)."""
    total = sum(sizes)
    exact = [n * s / total for s in sizes]
    counts = [int(x) for x in exact]
    order = sorted(range(len(sizes)), key=lambda i: exact[i] - counts[i], reverse=True)
    for i in order[: n - sum(counts)]:
        counts[i] += 1
    return counts


def plan_sample(
    row_groups: list[list[int]], n: int, seed: int
) -> dict[tuple[int, int], list[int]]:
    """Which rows to read: ``{(file, row_group): sorted row offsets}`` for ``n`` rows.

    ``row_groups[f][g]`` is the row count of row group ``g`` of file ``f``.
    """
    rng = np.random.default_rng(seed)
    file_rows = [sum(groups) for groups in row_groups]
    total = sum(file_rows)
    if total == 0:
        return {}
    n = min(n, total) if n > 0 else total
    plan: dict[tuple[int, int], list[int]] = {}
    for f, quota in enumerate(allocate(n, file_rows)):
        if quota == 0:
            continue
        groups = row_groups[f]
        chosen: list[int] = []
        pooled = 0
        for g in rng.permutation(len(groups)):
            if pooled >= quota * OVERSAMPLE:
                break
            if groups[g]:
                chosen.append(int(g))
                pooled += groups[g]
        chosen.sort()
        picks = np.sort(rng.choice(pooled, size=quota, replace=False))
        starts = np.cumsum([0] + [groups[g] for g in chosen])
        for pick in picks:
            k = int(np.searchsorted(starts, pick, side="right") - 1)
            plan.setdefault((f, chosen[k]), []).append(int(pick - starts[k]))
    return plan


def list_train_files(fs: Any, root: str, config: str | None) -> list[str]:
    """The train parquet files of a dataset repo, in a stable order."""
    base = f"{root}/{config}" if config else root
    patterns = [f"{base}/train-*.parquet", f"{base}/train/*.parquet", f"{base}/*train*.parquet"]
    for pattern in patterns:
        files = sorted(fs.glob(pattern))
        if files:
            return files
    return []


def _row_to_pair(row: dict[str, Any], source_lang: str, target_lang: str) -> Pair:
    text = row.get("translation", row)
    return Pair(str(text.get(source_lang) or ""), str(text.get(target_lang) or ""))


def read_sample(
    fs: Any, files: list[str], n: int, seed: int, source_lang: str, target_lang: str
) -> list[Pair]:
    """Read the planned rows from parquet ``files`` on filesystem ``fs`` (range reads)."""
    import pyarrow.parquet as pq

    handles = [pq.ParquetFile(fs.open(path, "rb")) for path in files]
    sizes = [
        [h.metadata.row_group(g).num_rows for g in range(h.metadata.num_row_groups)]
        for h in handles
    ]
    plan = plan_sample(sizes, n, seed)
    pairs: list[Pair] = []
    for (f, g), offsets in sorted(plan.items()):
        handle = handles[f]
        names = handle.schema_arrow.names
        columns = ["translation"] if "translation" in names else [source_lang, target_lang]
        table = handle.read_row_group(g, columns=columns).take(offsets)
        pairs.extend(_row_to_pair(row, source_lang, target_lang) for row in table.to_pylist())
    # The plan is ordered by file; shuffle so a later [:k] is not one domain either.
    order = np.random.default_rng(seed).permutation(len(pairs))
    return [pairs[i] for i in order]


def cache_path(cache_dir: Path, repo: str, config: str | None, src: str, tgt: str,
               n: int, seed: int) -> Path:
    """One cache file per (dataset, config, direction, size, seed)."""
    name = f"{repo.replace('/', '--')}-{config or 'default'}-{src}-{tgt}-n{n}-seed{seed}.jsonl"
    return cache_dir / name


def load_hub_sample(
    repo: str,
    config: str | None,
    source_lang: str,
    target_lang: str,
    n: int,
    seed: int,
    cache_dir: Path | None = None,
    fs: Any = None,
    root: str | None = None,
) -> list[Pair]:
    """``n`` random pairs of ``repo``'s train split, from the local cache when present."""
    cache = cache_path(cache_dir or default_cache_dir(), repo, config, source_lang,
                       target_lang, n, seed)
    if cache.is_file():
        rows = [json.loads(line) for line in cache.read_text(encoding="utf-8").splitlines()]
        return [Pair(r["source"], r["target"]) for r in rows]
    what = f"dataset '{repo}'" + (f" config '{config}'" if config else "")
    if fs is None:
        ensure_hub_reachable(what)
        from huggingface_hub import HfFileSystem

        fs = HfFileSystem()
        root = f"datasets/{repo}"
    try:
        files = list_train_files(fs, root or repo, config)
        if not files:
            raise WorkbenchError(
                f"{what} has no train parquet files; check the name and --data-config"
            )
        pairs = read_sample(fs, files, n, seed, source_lang, target_lang)
    except WorkbenchError:
        raise
    except Exception as err:  # the Hub client raises many types; name the fix instead
        if "NotFound" in type(err).__name__ or isinstance(err, FileNotFoundError):
            raise WorkbenchError(
                f"{what} was not found on the Hub; check the name passed to --data"
            ) from None
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise unreachable(what, reason) from None
    if not pairs:
        raise WorkbenchError(f"{what} gave no rows with '{source_lang}' and '{target_lang}'")
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(json.dumps({"source": p.source, "target": p.target}, ensure_ascii=False))
            fh.write("\n")
    tmp.replace(cache)
    return pairs
