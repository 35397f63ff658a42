"""How a seeded random sample of a Hub translation dataset is drawn without downloading all of it.

WMT19 zh-en's train split is ~26M rows in 13 parquet files ordered by source corpus
(UN, CWMT, news commentary, ...), so its first N rows, or a streaming shuffle buffer, all
come from one domain. Within a file, consecutive rows are consecutive lines of a
document, so a parquet row group (~1,000 rows) is a stretch of one document or a few.
Taking many rows from few row groups would fill the sample with neighbouring sentences
of the same documents, and the run's random 9:1 train/validation split would then put
sentences of one document on both sides: validation would partly measure recall of
documents seen in training, not translation. So we read each file's parquet footer (a
range request through ``HfFileSystem``) and sample in three stages:

1. **Stratify by file**: each file gets ``n * rows_in_file / total_rows`` of the sample
   (largest remainder), so every file -- every domain -- is represented in proportion.
2. **Many row groups**: within a file with quota ``q``, at least ``ceil(q / 8)`` of its
   non-empty row groups are chosen uniformly at random, without replacement.
3. **Few rows per group**: the quota is spread evenly over the chosen groups, at most
   :data:`MAX_ROWS_PER_GROUP` each, drawn uniformly without replacement within the group.

A 50,000-pair sample of WMT19 thus comes from ~6,250 row groups (a quarter of them) and
no 1,000-line stretch gives more than 8 lines. Each row of a file is equally likely
when its row groups have equal sizes (a row of a short last group is a little likelier).
Only when a file holds too few rows in its groups for the cap (tiny test files) is it
relaxed: every group is used and the quota is spread as evenly as group sizes allow.

Only the chosen row groups' ``translation`` column is downloaded, without read-ahead.
Hub reads are pinned to one commit: the dataset's current commit is resolved once and
every file is read at that sha, which goes into the cache file's name and back to the
caller. A cached sample is a JSONL file of ``{"source", "target"}`` rows, so a rerun
needs no network at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

#: The most rows a sample takes from one row group (~1,000 consecutive lines on WMT19).
MAX_ROWS_PER_GROUP = 8


class HubPair(NamedTuple):
    """A source sentence and its reference as read from the Hub: plain, so the sampler
    needs nothing from :mod:`workbench.core.data.sources` (which turns these into its ``Pair``)."""

    source: str
    target: str


@dataclass(frozen=True)
class HubSample:
    """A seeded random sample of a Hub dataset's train split: everything that chooses its
    rows, so another draw is another sample (and another cache file)."""

    repo: str  # owner/name
    config: str | None  # the dataset's config (zh-en), if it has several
    source_lang: str  # the translation column's keys, as the dataset names them
    target_lang: str
    n: int  # pairs drawn
    seed: int


@dataclass(frozen=True)
class HubSplit:
    """A whole split of a Hub dataset (a test set), read as it is: no size, no seed."""

    repo: str
    config: str | None
    split: str  # validation, test, ...
    source_lang: str
    target_lang: str


@dataclass(frozen=True)
class HubRows:
    """Rows read from a Hub dataset and the commit they were read at."""

    pairs: list[HubPair]
    revision: str | None  # commit sha; None when read from a plain (test) filesystem


def allocate(n: int, sizes: list[int]) -> list[int]:
    """Split ``n`` over strata in proportion to ``sizes`` (largest remainder method)."""
    total = sum(sizes)
    exact = [n * s / total for s in sizes]
    counts = [int(x) for x in exact]
    order = sorted(range(len(sizes)), key=lambda i: exact[i] - counts[i], reverse=True)
    for i in order[: n - sum(counts)]:
        counts[i] += 1
    return counts


def spread(quota: int, limits: list[int]) -> list[int]:
    """Split ``quota`` as evenly as ``limits`` allow; the first slots take any remainder."""
    counts = [0] * len(limits)
    left = min(quota, sum(limits))
    while left:
        open_slots = [i for i, limit in enumerate(limits) if counts[i] < limit]
        share = left // len(open_slots)
        if share == 0:
            for i in open_slots[:left]:
                counts[i] += 1
            break
        for i in open_slots:
            take = min(share, limits[i] - counts[i])
            counts[i] += take
            left -= take
    return counts


def plan_sample(row_groups: list[list[int]], n: int, seed: int) -> dict[tuple[int, int], list[int]]:
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
        sizes = row_groups[f]
        order = [int(g) for g in rng.permutation(len(sizes)) if sizes[g]]
        cap = MAX_ROWS_PER_GROUP
        chosen = order[: -(-quota // cap)]
        # A short group holds fewer than the cap: add groups until the quota fits.
        room = sum(min(sizes[g], cap) for g in chosen)
        for g in order[len(chosen) :]:
            if room >= quota:
                break
            chosen.append(g)
            room += min(sizes[g], cap)
        if room < quota:  # too few rows in groups for the cap: relax it (tiny files only)
            cap = max(sizes)
        # ``chosen`` is in random order, so the groups that get one row more are random.
        counts = spread(quota, [min(sizes[g], cap) for g in chosen])
        for g, count in zip(chosen, counts, strict=True):
            if count:
                offsets = rng.choice(sizes[g], size=count, replace=False)
                plan[(f, g)] = sorted(int(o) for o in offsets)
    return plan
