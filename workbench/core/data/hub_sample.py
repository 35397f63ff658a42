"""A seeded random sample of a Hub translation dataset without downloading all of it.

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

import glob
import json
import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict
from urllib.parse import quote, unquote

import numpy as np

from workbench.core.data.hub import damaged_file, ensure_hub_reachable, explain, range_ignored
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from typing import Unpack  # Python 3.11+; annotations only

#: The most rows a sample takes from one row group (~1,000 consecutive lines on WMT19).
MAX_ROWS_PER_GROUP = 8

#: How files are opened. fsspec's buffered files read ahead 5 MiB past every read by
#: default (``block_size``, "readahead" cache): on WMT19 that is 5 MiB per row group for
#: ~150 KB wanted. pyarrow already asks for exact ranges (the footer's last 64 KiB, then one
#: read per row group with ``pre_buffer=True``, which joins its column chunks), so no cache
#: at all is the least traffic: each read is one HTTP range request
#: (``HfFileSystemFile._fetch_range``) for exactly those bytes. The block size must stay
#: non-zero: ``block_size=0`` makes ``HfFileSystem`` return a streaming file that cannot
#: seek. Local and memory filesystems ignore both options.
OPEN_OPTIONS: dict[str, Any] = {"block_size": 2**16, "cache_type": "none"}

#: The revision part of a cache file's name when the rows came from a plain filesystem.
UNPINNED = "unpinned"


class HubPair(NamedTuple):
    """A source sentence and its reference as read from the Hub: plain, so the sampler
    needs nothing from :mod:`workbench.core.data.pairs` (which turns these into its ``Pair``)."""

    source: str
    target: str


@dataclass(frozen=True)
class HubRows:
    """Rows read from a Hub dataset and the commit they were read at."""

    pairs: list[HubPair]
    revision: str | None  # commit sha; None when read from a plain (test) filesystem


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
        sizes = row_groups[f]
        order = [int(g) for g in rng.permutation(len(sizes)) if sizes[g]]
        cap = MAX_ROWS_PER_GROUP
        chosen = order[: -(-quota // cap)]
        # A short group holds fewer than the cap: add groups until the quota fits.
        room = sum(min(sizes[g], cap) for g in chosen)
        for g in order[len(chosen):]:
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


def list_split_files(fs: Any, root: str, config: str | None, split: str) -> list[str]:
    """The parquet files of one split of a dataset repo, in a stable order."""
    base = f"{root}/{config}" if config else root
    patterns = [f"{base}/{split}-*.parquet", f"{base}/{split}/*.parquet",
                f"{base}/*{split}*.parquet"]
    for pattern in patterns:
        files = sorted(fs.glob(pattern))
        if files:
            return files
    return []


def _row_to_pair(row: dict[str, Any], source_lang: str, target_lang: str) -> HubPair:
    text = row.get("translation", row)
    return HubPair(str(text.get(source_lang) or ""), str(text.get(target_lang) or ""))


def _columns(handle: Any, source_lang: str, target_lang: str) -> list[str]:
    names = handle.schema_arrow.names
    return ["translation"] if "translation" in names else [source_lang, target_lang]


#: Files read at the same time: over a network each row group is one request, so the
#: round trips, not the bytes, set the time; one thread per file divides them.
READ_THREADS = 8


def _file_url(handle: Any, path: str) -> str:
    """Where a file comes from, for messages: its download URL on the Hub, else its path."""
    url = getattr(handle, "url", None)
    try:
        return str(url()) if callable(url) else path
    except Exception:  # a URL only for messages: never fail because of it
        return path


class ExactReads:
    """A file whose every read must return exactly the bytes asked for.

    ``HfFileSystemFile`` does not check that a range request was answered with 206: a
    server that ignores ``Range`` sends HTTP 200 and the whole file, which pyarrow would
    take for the footer or a row group ("Parquet magic bytes not found"), and a truncated
    file sends fewer bytes than its listed size. Both are caught here, at the read, where
    the URL and the byte counts can still be named.
    """

    def __init__(self, handle: Any, url: str) -> None:
        self._handle = handle
        self.url = url
        self.size = int(handle.size)

    def read(self, length: int = -1) -> bytes:
        """Read like the file does, then check the length against what was asked."""
        start = self._handle.tell()
        wanted = max(0, self.size - start)
        if length is not None and length >= 0:
            wanted = min(length, wanted)
        data = self._handle.read(length)
        if len(data) > wanted:
            raise range_ignored(self.url, wanted, len(data))
        if len(data) < wanted:
            raise damaged_file(self.url, f"asked for bytes {start:,}-{start + wanted - 1:,}, "
                               f"got {len(data):,}: the file is shorter than the {self.size:,} "
                               "bytes its listing says")
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        """Move the position (no request)."""
        return int(self._handle.seek(offset, whence))

    def tell(self) -> int:
        """The position."""
        return int(self._handle.tell())

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    @property
    def closed(self) -> bool:
        return bool(self._handle.closed)

    def close(self) -> None:
        self._handle.close()


@contextmanager
def _decoding(url: str) -> Iterator[None]:
    """Name the file when pyarrow cannot decode what it read (a corrupt copy).

    pyarrow reports a bad footer as ``OSError`` ("Couldn't deserialize thrift") and bad
    data as ``ArrowInvalid``; an HTTP error is an ``OSError`` too, but one with a
    response, and is left for :func:`_explained` to name.
    """
    import pyarrow as pa

    try:
        yield
    except WorkbenchError:
        raise
    except (pa.ArrowException, OSError) as err:
        if getattr(err, "response", None) is not None:
            raise
        raise damaged_file(url, f"not a readable parquet file: {err}") from None


def _parquet(stack: ExitStack, fs: Any, path: str) -> tuple[Any, str]:
    """A ``pyarrow.parquet.ParquetFile`` over ``path`` with checked reads, and its URL."""
    import pyarrow.parquet as pq

    handle = stack.enter_context(fs.open(path, "rb", **OPEN_OPTIONS))
    checked = ExactReads(handle, _file_url(handle, path))
    with _decoding(checked.url):
        return pq.ParquetFile(checked, pre_buffer=True), checked.url


def read_sample(
    fs: Any, files: list[str], n: int, seed: int, source_lang: str, target_lang: str
) -> list[HubPair]:
    """Read the planned rows from parquet ``files`` on filesystem ``fs`` (range reads).

    Each file is read by its own thread (at most ``READ_THREADS`` at once) through its own
    open file; the result does not depend on the order the threads finish in.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ExitStack() as stack:
        def open_parquet(path: str) -> tuple[Any, str]:
            return _parquet(stack, fs, path)

        with ThreadPoolExecutor(max_workers=min(READ_THREADS, len(files) or 1)) as pool:
            opened = list(pool.map(open_parquet, files))
            handles = [handle for handle, _ in opened]
            urls = [url for _, url in opened]
            sizes = [
                [h.metadata.row_group(g).num_rows for g in range(h.metadata.num_row_groups)]
                for h in handles
            ]
            plan = plan_sample(sizes, n, seed)

            def read_file(f: int) -> list[HubPair]:
                handle = handles[f]
                columns = _columns(handle, source_lang, target_lang)
                found: list[HubPair] = []
                for (_, g), offsets in sorted(item for item in plan.items() if item[0][0] == f):
                    with _decoding(urls[f]):
                        table = handle.read_row_group(g, columns=columns).take(offsets)
                    found.extend(_row_to_pair(r, source_lang, target_lang)
                                 for r in table.to_pylist())
                return found

            pairs = [pair for found in pool.map(read_file, range(len(files))) for pair in found]
    # The plan is ordered by file; shuffle so a later [:k] is not one domain either.
    order = np.random.default_rng(seed).permutation(len(pairs))
    return [pairs[i] for i in order]


def read_all(fs: Any, files: list[str], source_lang: str, target_lang: str) -> list[HubPair]:
    """Every row of parquet ``files`` on filesystem ``fs``, in file order."""
    pairs: list[HubPair] = []
    for path in files:
        with ExitStack() as stack:
            handle, url = _parquet(stack, fs, path)
            with _decoding(url):
                table = handle.read(columns=_columns(handle, source_lang, target_lang))
            pairs.extend(_row_to_pair(r, source_lang, target_lang) for r in table.to_pylist())
    return pairs


# --- the cache: one JSONL file per (what was read, revision) ---------------------------


def _sample_stem(repo: str, config: str | None, src: str, tgt: str, n: int, seed: int) -> str:
    # The cap is in the name: a sample drawn under another scheme is another sample.
    return (f"{repo.replace('/', '--')}-{config or 'default'}-{src}-{tgt}-n{n}-seed{seed}"
            f"-cap{MAX_ROWS_PER_GROUP}")


def _split_stem(repo: str, config: str | None, split: str, src: str, tgt: str) -> str:
    return f"{repo.replace('/', '--')}-{config or 'default'}-{split}-{src}-{tgt}"


def _cache_file(cache_dir: Path, stem: str, revision: str | None) -> Path:
    # ``name@sha.jsonl``, as the Hub writes ``repo@revision``; quoted so a branch such as
    # "refs/pr/1" stays one file name.
    return cache_dir / f"{stem}@{quote(revision, safe='') if revision else UNPINNED}.jsonl"


def _find_cached(cache_dir: Path, stem: str, revision: str | None) -> Path | None:
    if revision is not None:
        path = _cache_file(cache_dir, stem, revision)
        return path if path.is_file() else None
    found = [p for p in cache_dir.glob(f"{glob.escape(stem)}@*.jsonl") if p.is_file()]
    return max(found, key=lambda p: p.stat().st_mtime, default=None)


def cached_revision(path: Path) -> str | None:
    """The revision a cache file was read at, from its name (None: a plain filesystem)."""
    token = path.name.removesuffix(".jsonl").rsplit("@", 1)[-1]
    return None if token == UNPINNED else unquote(token)


def find_cached_sample(
    cache_dir: Path, repo: str, config: str | None, source_lang: str, target_lang: str,
    n: int, seed: int, revision: str | None = None,
) -> Path | None:
    """The cached sample at ``revision``; with None, the newest one at any revision."""
    stem = _sample_stem(repo, config, source_lang, target_lang, n, seed)
    return _find_cached(cache_dir, stem, revision)


def find_cached_split(
    cache_dir: Path, repo: str, config: str | None, split: str, source_lang: str,
    target_lang: str, revision: str | None = None,
) -> Path | None:
    """The cached split at ``revision``; with None, the newest one at any revision."""
    stem = _split_stem(repo, config, split, source_lang, target_lang)
    return _find_cached(cache_dir, stem, revision)


def read_cached(path: Path) -> HubRows:
    """The rows of a cache file and the revision they were read at."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return HubRows([HubPair(r["source"], r["target"]) for r in rows], cached_revision(path))


def write_cached(path: Path, pairs: list[HubPair]) -> None:
    """Write ``pairs`` as JSONL, atomically: a temporary file, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(json.dumps({"source": p.source, "target": p.target}, ensure_ascii=False))
            fh.write("\n")
    tmp.replace(path)


# --- reading from the Hub ----------------------------------------------------------------


def _describe(repo: str, config: str | None) -> str:
    return f"dataset '{repo}'" + (f" config '{config}'" if config else "")


def _open_hub_repo(repo: str, revision: str | None, what: str) -> tuple[Any, str, str]:
    """``(HfFileSystem, root path, commit sha)`` for ``repo`` at ``revision`` (None: main).

    One request resolves the revision to its commit sha; every path under the root names
    that sha, so all files come from one commit even if the dataset changes meanwhile.
    """
    ensure_hub_reachable(what)
    from huggingface_hub import HfApi, HfFileSystem

    sha = HfApi().dataset_info(repo, revision=revision).sha
    if not sha:
        raise WorkbenchError(f"the Hub gave no commit for dataset '{repo}'; try again later")
    return HfFileSystem(), f"datasets/{repo}@{sha}", sha  # a sha needs no quoting in a path


@contextmanager
def _explained(what: str, revision: str | None) -> Iterator[None]:
    """Turn the Hub client's many exception types into one sentence with the fix."""
    try:
        yield
    except WorkbenchError:
        raise
    except Exception as err:
        name = type(err).__name__
        if "Revision" in name and "NotFound" in name:
            raise WorkbenchError(
                f"{what} has no revision '{revision}' on the Hub; set data_revision to a "
                "commit sha, branch or tag of it, or to none for the newest"
            ) from None
        if name == "HFValidationError":  # a malformed id, refused before any request
            raise WorkbenchError(
                f"{what} is not a valid Hub dataset id ({str(err).splitlines()[0]}); check "
                "the name passed to --data (owner/name, or a path to a local file)"
            ) from None
        found = explain(err, what, "check the name passed to --data")
        if found is not None:
            raise found from None
        if "NotFound" in name or isinstance(err, FileNotFoundError):
            raise WorkbenchError(
                f"{what} was not found on the Hub; check the name passed to --data"
            ) from None
        raise  # not about the Hub: a bug to see with its traceback


def _load_rows(repo: str, config: str | None, split: str, stem: str,
               read: Callable[[Any, list[str]], list[HubPair]], no_split_fix: str,
               cache_dir: Path | None = None, fs: Any = None, root: str | None = None,
               revision: str | None = None) -> HubRows:
    """The rows cached under ``stem``, or ``read(fs, files)`` of ``split`` at one commit.

    With the real Hub (``fs`` None) the revision is resolved to its commit first, and the
    cache is asked again for that commit (a branch name's rows may be there already).
    """
    cache_dir = cache_dir or default_cache_dir()
    cached = _find_cached(cache_dir, stem, revision)
    if cached:
        return read_cached(cached)
    what = _describe(repo, config)
    with _explained(what, revision):
        if fs is None:
            fs, root, revision = _open_hub_repo(repo, revision, what)
            cached = _find_cached(cache_dir, stem, revision)
            if cached:
                return read_cached(cached)
        files = list_split_files(fs, root or repo, config, split)
        if not files:
            raise WorkbenchError(f"{what} has no '{split}' split; {no_split_fix}")
        pairs = read(fs, files)
    if not pairs:
        raise WorkbenchError(f"{what} split '{split}' gave no rows with both languages; "
                             "check --source-lang and --target-lang")
    write_cached(_cache_file(cache_dir, stem, revision), pairs)
    return HubRows(pairs, revision)


class HubLocation(TypedDict, total=False):
    """Where rows are read: the cache folder, and for tests and mirrors the filesystem,
    its root and the commit (by default the Hub's, at its newest commit)."""

    cache_dir: Path | None
    fs: Any
    root: str | None
    revision: str | None


def load_hub_sample(repo: str, config: str | None, source_lang: str, target_lang: str,
                    n: int, seed: int, **location: Unpack[HubLocation]) -> HubRows:
    """``n`` random pairs of ``repo``'s train split, from the local cache when present."""
    return _load_rows(
        repo, config, "train", _sample_stem(repo, config, source_lang, target_lang, n, seed),
        lambda fs, files: read_sample(fs, files, n, seed, source_lang, target_lang),
        "check the name and --data-config", **location)


def load_hub_split(repo: str, config: str | None, split: str, source_lang: str,
                   target_lang: str, **location: Unpack[HubLocation]) -> HubRows:
    """Every row of ``repo``'s ``split`` split (e.g. a test set), from the cache when present."""
    return _load_rows(
        repo, config, split, _split_stem(repo, config, split, source_lang, target_lang),
        lambda fs, files: read_all(fs, files, source_lang, target_lang),
        "pass --test-data FILE or set test_split = none", **location)
