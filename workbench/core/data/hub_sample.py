"""A seeded random sample (or a whole split) of a Hub translation dataset, read at one
commit and cached: the entry points. How the sample is drawn is
:mod:`workbench.core.data.sample_plan`; the reads :mod:`~workbench.core.data.sample_reads`
through :mod:`~workbench.core.data.parquet_files`; the cache
:mod:`~workbench.core.data.sample_cache`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from workbench.core.cache_use import using
from workbench.core.data.hub import HubRetriesExhausted, explain
from workbench.core.data.hub_requests import ensure_hub_reachable
from workbench.core.data.parquet_files import list_split_files, read_all
from workbench.core.data.sample_cache import (
    PartialSample,
    cache_file,
    default_cache_dir,
    find_cached,
    read_cached,
    sample_stem,
    split_stem,
    write_cached,
)
from workbench.core.data.sample_plan import HubPair, HubRows, HubSample, HubSplit
from workbench.core.data.sample_reads import read_sample
from workbench.core.events import EventSink
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's from 3.11; annotations only


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
    except HubRetriesExhausted as err:
        raise err.about(what) from None
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


@dataclass(frozen=True)
class SplitFiles:
    """The parquet files of one split at one commit, and where their pieces are kept."""

    fs: Any
    files: list[str]
    kept: PartialSample | None  # None unless the commit is pinned


def _load_rows(
    repo: str,
    config: str | None,
    split: str,
    stem: str,
    read: Callable[[SplitFiles], list[HubPair]],
    no_split_fix: str,
    cache_dir: Path | None = None,
    fs: Any = None,
    root: str | None = None,
    revision: str | None = None,
) -> HubRows:
    """The rows cached under ``stem``, or ``read`` of ``split``'s files at one commit.

    With the real Hub (``fs`` None) the revision is resolved to its commit first, and the
    cache is asked again for that commit (a branch name's rows may be there already).
    """
    cache_dir = cache_dir or default_cache_dir()
    rows = _cached_rows(cache_dir, stem, revision)
    if rows is not None:
        return rows
    what = _describe(repo, config)
    with _explained(what, revision):
        if fs is None:
            fs, root, revision = _open_hub_repo(repo, revision, what)
            rows = _cached_rows(cache_dir, stem, revision)
            if rows is not None:
                return rows
        root = root or repo
        files = list_split_files(fs, root, config, split)
        if not files:
            raise WorkbenchError(f"{what} has no '{split}' split; {no_split_fix}")
        kept = PartialSample(cache_dir, repo, revision, root) if revision else None
        with using(kept.folder) if kept is not None else nullcontext():
            pairs = read(SplitFiles(fs, files, kept))
    if not pairs:
        raise WorkbenchError(
            f"{what} split '{split}' gave no rows with both languages; "
            "check --source-lang and --target-lang"
        )
    write_cached(cache_file(cache_dir, stem, revision), pairs)
    if kept is not None:
        kept.forget_rows()  # all in the cache file now
    return HubRows(pairs, revision)


def _cached_rows(cache_dir: Path, stem: str, revision: str | None) -> HubRows | None:
    """The rows cached under ``stem`` at ``revision`` (None: the newest at any), if any."""
    cached = find_cached(cache_dir, stem, revision)
    return read_cached(cached) if cached else None


class HubLocation(TypedDict, total=False):
    """Where rows are read: the cache folder, and for tests and mirrors the filesystem,
    its root and the commit (by default the Hub's, at its newest commit)."""

    cache_dir: Path | None
    fs: Any
    root: str | None
    revision: str | None


def load_hub_sample(
    sample: HubSample, on_event: EventSink | None = None, **location: Unpack[HubLocation]
) -> HubRows:
    """``sample.n`` random pairs of the dataset's train split, from the local cache when
    present.

    What arrives is kept row group by row group, so a read stopped half-way resumes;
    ``on_event`` hears how many row groups and bytes are in hand.
    """
    return _load_rows(
        sample.repo,
        sample.config,
        "train",
        sample_stem(sample),
        lambda files: read_sample(
            files.fs,
            files.files,
            sample.n,
            sample.seed,
            sample.source_lang,
            sample.target_lang,
            files.kept,
            on_event,
        ),
        "check the name and --data-config",
        **location,
    )


def load_hub_split(split: HubSplit, **location: Unpack[HubLocation]) -> HubRows:
    """Every row of one split of a dataset (e.g. a test set), from the cache when present."""
    return _load_rows(
        split.repo,
        split.config,
        split.split,
        split_stem(split),
        lambda files: read_all(files.fs, files.files, split.source_lang, split.target_lang),
        "pass --test-data FILE or set test_split = none",
        **location,
    )
