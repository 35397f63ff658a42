"""The kinds of cache entry and where each lies: which files or folders under a kind's
folder are entries, and when one is whole.

Each cache module owns its layout (:mod:`workbench.core.data.prepared_cache`,
:mod:`~workbench.core.evaluate.before_cache`, :mod:`~workbench.core.data.sample_cache`,
:mod:`~workbench.core.preferences.cache`); this table only names, in their terms, what a
listing counts as one entry. A name that starts with a dot is never an entry: a build in
progress (``.building-…``), a temporary file of an atomic write, a removal's trash, the
use records (``.uses/``). So an entry is listed only once it is published, and a folder
entry built in place (ranked lines) is listed whole only once its seal is in it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from workbench.core.cache_root import cache_folder
from workbench.core.data.prepared_cache import ALIASES
from workbench.core.data.prepared_cache import DONE_FILE as PREPARED_SEAL
from workbench.core.picking.choices import check_choice
from workbench.core.preferences.cache import DONE_FILE as PREFERENCES_SEAL

#: The kind of the attention views a run keeps in its own folder (no cache folder).
HEATMAPS = "heatmaps"
#: What a removal renames an entry to before deleting it: hidden, so never listed.
TRASH_PREFIX = ".trash-"


@dataclass(frozen=True)
class EntryShape:
    """One shape of entry in a kind's folder."""

    pattern: str  # a glob under the kind's folder
    folder: bool  # whether entries are folders (else files)
    #: The file a folder entry holds once whole, written last (None: whole when there,
    #: as a file renamed into place is).
    sealed_by: str | None = None
    #: Entries that are never whole: what a stopped read left, to go on from.
    partial: bool = False
    #: Names that match the pattern but are no entry.
    not_entries: tuple[str, ...] = ()


@dataclass(frozen=True)
class CacheKind:
    """One kind of entry: its name, what a user calls it, its folder and shapes."""

    name: str  # also its folder's name under the cache root, as its owner names it
    title: str
    shapes: tuple[EntryShape, ...]

    def folder(self) -> Path:
        """Its folder under the cache root (read without importing the cache's owner,
        whose module may import numpy: ``workbench cache`` stays light)."""
        return cache_folder(self.name)


KINDS = (
    CacheKind(
        "prepared",
        "prepared data",
        (EntryShape("*", folder=True, sealed_by=PREPARED_SEAL, not_entries=(ALIASES,)),),
    ),
    CacheKind("before", '"before" translations', (EntryShape("*.json", False),)),
    CacheKind(
        "samples",
        "Hub samples",
        (EntryShape("*.jsonl", False), EntryShape("partial/*", folder=True, partial=True)),
    ),
    CacheKind(
        "preferences",
        "ranked preference lines",
        (EntryShape("*", folder=True, sealed_by=PREFERENCES_SEAL),),
    ),
)
#: Every kind's name and title, the run folders' views last.
TITLES = {**{kind.name: kind.title for kind in KINDS}, HEATMAPS: "kept heatmap views"}


@dataclass(frozen=True)
class FoundEntry:
    """An entry on disk: its kind, name and path, whether it is whole, and its seal."""

    kind: str
    name: str  # its path under the kind's folder
    path: Path
    complete: bool
    seal: Path | None


def found_entries(kind: CacheKind) -> Iterator[FoundEntry]:
    """The entries of ``kind`` on disk now, in name order."""
    root = kind.folder()
    for shape in kind.shapes:
        for path in sorted(root.glob(shape.pattern)):
            if path.name.startswith(".") or path.name in shape.not_entries:
                continue
            if path.is_dir() != shape.folder or path.is_symlink():
                continue
            seal = path / shape.sealed_by if shape.sealed_by else None
            whole = not shape.partial and (seal is None or seal.is_file())
            yield FoundEntry(kind.name, path.relative_to(root).as_posix(), path, whole, seal)


def kind_folders() -> list[Path]:
    """Each folder that holds entries (and their ``.uses/``), for tidying."""
    folders = []
    for kind in KINDS:
        root = kind.folder()
        folders.append(root)
        folders += [root / s.pattern.rsplit("/", 1)[0] for s in kind.shapes if "/" in s.pattern]
    return folders


def check_kinds(kinds: list[str] | None) -> list[str] | None:
    """``kinds`` as given (None: all), each a kind's name, else one line naming it."""
    for kind in kinds or ():
        check_choice("--kind", kind, tuple(TITLES))
    return kinds
