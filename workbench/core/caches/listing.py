"""Every cache entry with its size, last use and users: what ``workbench cache`` prints
and what pruning chooses from.

The size is the space an entry takes on disk, counted as ``du`` counts it (each file's and
folder's allocated blocks, a file with several hard links once), so the figure listed is
``du -sB1``'s and the space removing the entry frees; ``du -sb``'s (the files' lengths) is
kept beside it. Last use and runs come from the entry's use record
(:mod:`workbench.core.cache_use`). An entry made before uses were recorded has none: its
last use is the newest modification time among its files, and its runs are unknown. An
entry is in use while a run among its users is alive: its writer holds the run folder
(:func:`~workbench.core.live.liveness.run_liveness`, the one test of a live run).

The attention views a run keeps (``attention_heatmaps.json``) lie in the run's own folder,
not under the cache folder: they are found in the runs the use records name and under the
output folders asked for, and their one user is their run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from workbench.core.cache_root import cache_root
from workbench.core.cache_use import read_uses
from workbench.core.caches.kinds import HEATMAPS, KINDS, FoundEntry, found_entries
from workbench.core.live.liveness import run_liveness
from workbench.core.records.files import read_json_dict
from workbench.core.run_folder.layout import RunFolder
from workbench.core.run_folder.output_folder import run_folders


@dataclass(frozen=True)
class CacheEntry:
    """One entry as listed: where it is, what it takes, when and by whom it was used."""

    kind: str
    name: str  # its name in its kind's folder (a run's views: the run's name)
    path: Path
    size: int  # bytes on disk, as du counts them
    apparent_size: int  # the files' lengths, as du -b counts them
    last_used: float  # a Unix time
    runs: tuple[str, ...] | None  # run folders that used it; None: unknown (no record)
    live_runs: tuple[str, ...]  # those alive now
    complete: bool  # whole (a partial entry is a read or build to go on from)
    what: str | None = None  # what it was made from, where the entry says

    @property
    def in_use(self) -> bool:
        """Whether a live run uses it: pruning leaves it alone."""
        return bool(self.live_runs)

    @property
    def recorded(self) -> bool:
        """Whether its last use and runs come from a use record (else its files' times)."""
        return self.runs is not None


@dataclass(frozen=True)
class CacheListing:
    """Every entry, by kind, and the folder the caches live in."""

    root: Path
    entries: tuple[CacheEntry, ...]

    @property
    def size(self) -> int:
        """Bytes on disk of every entry."""
        return sum(entry.size for entry in self.entries)

    def of_kind(self, kind: str) -> list[CacheEntry]:
        """The entries of one kind."""
        return [entry for entry in self.entries if entry.kind == kind]


class LiveRuns:
    """Whether run folders are alive now, each asked once per listing."""

    def __init__(self) -> None:
        self._known: dict[str, bool] = {}

    def live(self, runs: Sequence[str]) -> tuple[str, ...]:
        """Those of ``runs`` whose writer holds their folder now."""
        for run in runs:
            if run not in self._known:
                self._known[run] = run_liveness(Path(run)).writing
        return tuple(run for run in runs if self._known[run])


def list_caches(
    output_dirs: Iterable[Path] = (), kinds: Iterable[str] | None = None
) -> CacheListing:
    """Every entry of the caches (of ``kinds`` only, when given), and the views kept in
    the runs the records name and under ``output_dirs``."""
    wanted = set(kinds) if kinds is not None else None
    alive = LiveRuns()
    found = [entry for kind in KINDS for entry in found_entries(kind)]
    entries = [read_entry(f, alive) for f in found if wanted is None or f.kind in wanted]
    if wanted is None or HEATMAPS in wanted:
        named = {run for f in found for run in _recorded_runs(f.path)}
        folders = {str(run.resolve()) for out in output_dirs for run in run_folders(out)}
        entries += heatmap_entries(sorted(named | folders), alive)
    return CacheListing(cache_root(), tuple(entries))


def _recorded_runs(entry: Path) -> tuple[str, ...]:
    """The runs an entry's record names (none without a record)."""
    uses = read_uses(entry)
    return uses.runs if uses is not None else ()


def read_entry(found: FoundEntry, alive: LiveRuns) -> CacheEntry:
    """One entry of a cache folder, its use record and its files read now."""
    size, apparent, newest = disk_usage(found.path)
    uses = read_uses(found.path)
    runs = uses.runs if uses is not None else None
    seal = read_json_dict(found.seal) if found.seal is not None else None
    origin = seal.get("origin") if seal is not None else None
    return CacheEntry(
        kind=found.kind,
        name=found.name,
        path=found.path,
        size=size,
        apparent_size=apparent,
        last_used=uses.last_used if uses is not None else newest,
        runs=runs,
        live_runs=alive.live(runs or ()),
        complete=found.complete,
        what=origin if isinstance(origin, str) else None,
    )


def heatmap_entries(runs: Iterable[str], alive: LiveRuns) -> list[CacheEntry]:
    """The kept attention views of each run folder of ``runs`` that has them."""
    found = []
    for run in runs:
        path = RunFolder(Path(run)).heatmaps
        try:
            if not path.is_file():
                continue
            size, apparent, newest = disk_usage(path)
        except OSError:  # another user's run folder this user may not read: not theirs to list
            continue
        found.append(
            CacheEntry(
                kind=HEATMAPS,
                name=Path(run).name,
                path=path,
                size=size,
                apparent_size=apparent,
                last_used=newest,
                runs=(run,),
                live_runs=alive.live((run,)),
                complete=True,
            )
        )
    return found


def disk_usage(path: Path) -> tuple[int, int, float]:
    """(bytes on disk, bytes of content, newest modification time) of a file or a folder
    and everything under it, each inode counted once, as ``du`` counts; a file that goes
    while it is counted counts nothing."""
    used = apparent = 0
    newest = 0.0
    seen: set[tuple[int, int]] = set()
    pending = [str(path)]
    while pending:
        where = pending.pop()
        try:
            info = os.lstat(where)
        except OSError:
            continue
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        used += info.st_blocks * 512
        apparent += info.st_size
        newest = max(newest, info.st_mtime)
        if stat.S_ISDIR(info.st_mode):
            try:
                pending += [entry.path for entry in os.scandir(where)]
            except OSError:
                continue
    return used, apparent, newest
