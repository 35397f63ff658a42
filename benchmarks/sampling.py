"""How a 50,000-pair sample of WMT19 zh-en is drawn: old plan against new, on a local copy.

Usage: python benchmarks/sampling.py [--folder /tmp/wmt19-like] [--rows-per-file 2000000]
                                     [--n 50000] [--seed 0] [--out benchmarks/SAMPLING.md]
       python benchmarks/sampling.py --smoke   # 2,000 rows a file, 200 pairs: a second

``--smoke`` builds its tiny corpus in a temporary folder (never over a corpus in
``--folder``) and writes its report to one: the test suite runs it, so that a broken
benchmark shows in CI.

1. Builds (or reuses) a local parquet set shaped like WMT19 zh-en's train split
   (``sampling_corpus.py``): 13 files, ``--rows-per-file`` rows each, row groups of 1,000
   rows, random Zipf-distributed English and Chinese text.
2. Draws an ``--n`` pair sample with each scheme through a filesystem that opens local
   files the way ``HfFileSystem`` opens Hub files (fsspec buffered files, one range read
   per cache miss) and counts the reads and bytes fetched:

   * **old** -- reimplemented here, for comparison only: whole row groups in a seeded
     random order until they hold 4x the file's quota, the quota drawn from those rows;
     files opened with fsspec's defaults (5 MiB read-ahead).
   * **new** -- ``workbench.core.data.sample_reads.read_sample`` as it is: at most
     ``MAX_ROWS_PER_GROUP`` rows from each of many random row groups, no read-ahead.

   Two cross rows separate the two changes: the old plan without read-ahead, and the new
   plan with fsspec's default read-ahead.
3. Reports per scheme: row groups read, distinct 1,000-line windows, the most rows from
   one row group, files represented, range reads, bytes fetched, wall time.

Every row's English starts with ``f<file> r<row>`` so the windows are counted from the
sample itself, not from the plan. The report is written by ``sampling_report.py``.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from figures import report_path
from fsspec.implementations.local import LocalFileSystem
from fsspec.spec import AbstractBufferedFile
from sampling_corpus import FILES, build_corpus
from sampling_report import write_report

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.core.data import parquet_files, sample_plan, sample_reads
from workbench.core.data.pair import Pair
from workbench.core.data.sample_plan import HubPair

WINDOW = 1_000  # a "window" is 1,000 consecutive lines of one file
OLD_OVERSAMPLE = 4


# --- counting what a sample fetches ---------------------------------------------------------


class CountingFile(AbstractBufferedFile):
    """A buffered file as ``HfFileSystemFile`` is: each cache miss is one range request."""

    def _fetch_range(self, start: int, end: int) -> bytes:
        with open(self.path, "rb") as fh:
            fh.seek(start)
            data = fh.read(end - start)
        self.fs.reads += 1
        self.fs.bytes += len(data)
        return data


class CountingFileSystem(LocalFileSystem):
    """Local files opened like Hub files; ``reads`` and ``bytes`` fetched so far."""

    cachable = False  # a fresh instance, and fresh counts, each time

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0
        self.bytes = 0

    def _open(
        self, path: str, mode: str = "rb", block_size: Any = None, **kwargs: Any
    ) -> CountingFile:
        return CountingFile(self, self._strip_protocol(path), mode, block_size=block_size, **kwargs)


def old_plan(row_groups: list[list[int]], n: int, seed: int) -> dict[tuple[int, int], list[int]]:
    """The old arm's plan, for comparison only: whole groups up to 4x quota."""
    rng = np.random.default_rng(seed)
    file_rows = [sum(groups) for groups in row_groups]
    plan: dict[tuple[int, int], list[int]] = {}
    for f, quota in enumerate(sample_plan.allocate(n, file_rows)):
        if quota == 0:
            continue
        groups = row_groups[f]
        chosen: list[int] = []
        pooled = 0
        for g in rng.permutation(len(groups)):
            if pooled >= quota * OLD_OVERSAMPLE:
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


def old_read_sample(fs: Any, files: list[str], n: int, seed: int) -> list[Pair]:
    """The old arm's reader, for comparison only: default open, old plan."""
    handles = [pq.ParquetFile(fs.open(path, "rb")) for path in files]
    sizes = [
        [h.metadata.row_group(g).num_rows for g in range(h.metadata.num_row_groups)]
        for h in handles
    ]
    pairs: list[Pair] = []
    for (f, g), offsets in sorted(old_plan(sizes, n, seed).items()):
        table = handles[f].read_row_group(g, columns=["translation"]).take(offsets)
        pairs.extend(
            Pair(r["translation"]["en"], r["translation"]["zh"]) for r in table.to_pylist()
        )
    order = np.random.default_rng(seed).permutation(len(pairs))
    return [pairs[i] for i in order]


def new_read_sample(
    fs: Any,
    files: list[str],
    n: int,
    seed: int,
    plan: Any = None,
    open_options: dict[str, Any] | None = None,
) -> list[HubPair]:
    """``sample_reads.read_sample`` as it is, or with another plan or open options swapped in."""
    saved = sample_reads.plan_sample, dict(parquet_files.OPEN_OPTIONS)
    if plan is not None:
        sample_reads.plan_sample = plan
    if open_options is not None:
        parquet_files.OPEN_OPTIONS.clear()
        parquet_files.OPEN_OPTIONS.update(open_options)
    try:
        return sample_reads.read_sample(fs, files, n, seed, "en", "zh")
    finally:
        sample_reads.plan_sample = saved[0]
        parquet_files.OPEN_OPTIONS.clear()
        parquet_files.OPEN_OPTIONS.update(saved[1])


def draw(paths: list[Path], n: int, seed: int, read: Any) -> dict[str, Any]:
    """One sample drawn by ``read(fs, files, n, seed)``: its shape and what it fetched."""
    fs = CountingFileSystem()
    start = time.perf_counter()
    pairs = read(fs, [str(p) for p in paths], n, seed)
    wall = time.perf_counter() - start
    return {"wall": wall, "reads": fs.reads, "bytes": fs.bytes, **shape(pairs)}


def shape(pairs: Sequence[Pair | HubPair]) -> dict[str, Any]:
    """How clustered a sample is, read from the rows' ``f<file> r<row>`` labels."""
    where = [(int(f[1:]), int(r[1:])) for f, r, *_ in (p.source.split(" ", 2) for p in pairs)]
    windows = collections.Counter((f, r // WINDOW) for f, r in where)
    return {
        "pairs": len(pairs),
        "distinct": len(set(where)),
        "windows": len(windows),
        "max_per_window": max(windows.values(), default=None),
        "files": len({f for f, _ in where}),
    }


def main() -> None:
    """Read the flags; ``--smoke`` runs on a tiny corpus in a temporary folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=Path("/tmp/wmt19-like"))
    parser.add_argument("--rows-per-file", type=int, default=2_000_000)
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="default: benchmarks/SAMPLING.md")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="2,000 rows a file and a 200-pair sample, corpus and report in temporary "
        "folders: the code paths in a second",
    )
    args = parser.parse_args()
    args.out = report_path(args.out, Path(__file__).with_name("SAMPLING.md"), args.smoke)
    if not args.smoke:
        run(args)
        return
    args.rows_per_file, args.n = 2_000, 200
    with tempfile.TemporaryDirectory(prefix="sampling-smoke-") as folder:
        args.folder = Path(folder)
        run(args)


def run(args: argparse.Namespace) -> None:
    """Build (or reuse) the corpus, draw the sample every way, write the report."""

    print(f"corpus: {FILES} files x {args.rows_per_file:,} rows in {args.folder}", flush=True)
    start = time.perf_counter()
    paths = build_corpus(args.folder, args.rows_per_file)
    build_s = time.perf_counter() - start
    size = sum(p.stat().st_size for p in paths)
    meta = pq.ParquetFile(paths[0]).metadata
    footer = meta.serialized_size
    sample = pq.ParquetFile(paths[0]).read_row_group(0).column(0).to_pylist()[:50]
    en_chars = float(np.mean([len(r["en"]) for r in sample]))
    zh_chars = float(np.mean([len(r["zh"]) for r in sample]))
    print(
        f"  {size / 2**30:.2f} GiB on disk ({size / (FILES * args.rows_per_file):.0f} B/row), "
        f"footer {footer / 2**10:.0f} KiB, {meta.num_row_groups} row groups per file, "
        f"en ~{en_chars:.0f} chars, zh ~{zh_chars:.0f} chars; ready in {build_s:.0f} s",
        flush=True,
    )

    readahead: dict[str, Any] = {}  # fsspec's defaults: a 5 MiB read-ahead block
    runs = [
        ("before: old plan, old reader (5 MiB read-ahead)", old_read_sample),
        ("old plan, new reader (no read-ahead)", partial(new_read_sample, plan=old_plan)),
        (
            "new plan, new reader with 5 MiB read-ahead",
            partial(new_read_sample, open_options=readahead),
        ),
        ("now: new plan, new reader (no read-ahead)", new_read_sample),
    ]
    results = []
    for label, read in runs:
        result = draw(paths, args.n, args.seed, read)
        results.append((label, result))
        print(f"  {label}: {result}", flush=True)

    write_report(args, results, size, footer, en_chars, zh_chars, build_s)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
