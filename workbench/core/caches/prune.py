"""Pruning the caches: what goes, in which order, and each removal whole or not at all.

The choice (:func:`prune`) walks the entries least recently used first. An entry goes when
it has not been used for longer than ``older_than``, or while the caches still hold more
than ``max_size``: the old ones first, then the least recently used until the total fits.
An entry a live run uses is never removed, and still counts in the total.

A removal (:func:`remove_entry`) first takes the entry's lock exclusive without waiting
(:func:`~workbench.core.cache_use.claimed`): an entry a process reads or prepares now is
skipped, and said to be. Holding the lock, it reads the entry's record again (a run that
used the entry since it was listed keeps it) and renames the entry to a hidden trash name
in its folder: one atomic step, so a reader finds the whole entry or none, and the next
use simply prepares it again. The trash is deleted once the lock is let go; what a pruner
killed meanwhile left is deleted by the next (:func:`tidy`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from workbench.core.cache_use import USES_FOLDER, claimed, read_uses
from workbench.core.caches.amounts import parse_duration, parse_size, span
from workbench.core.caches.kinds import HEATMAPS, TRASH_PREFIX, kind_folders
from workbench.core.caches.listing import CacheEntry, CacheListing, LiveRuns, list_caches
from workbench.core.views.numbers import format_si_bytes

#: What ``prune`` removes when given neither rule.
DEFAULT_OLDER_THAN = "30d"


@dataclass(frozen=True)
class PruneRule:
    """When an entry goes: unused for longer than ``older_than`` seconds, or least
    recently used while the caches hold more than ``max_size`` bytes (None: no such rule)."""

    older_than: float | None = None
    max_size: int | None = None

    @classmethod
    def of(cls, older_than: str | None, max_size: str | None) -> PruneRule:
        """The rule the flags say (each refused in one line when it is no duration or
        size); neither: entries unused for :data:`DEFAULT_OLDER_THAN`."""
        if older_than is None and max_size is None:
            older_than = DEFAULT_OLDER_THAN
        return cls(
            parse_duration(older_than) if older_than is not None else None,
            parse_size(max_size) if max_size is not None else None,
        )

    def why(self, entry: CacheEntry, total: int, now: float) -> str | None:
        """Why ``entry`` goes while the caches hold ``total`` bytes, or None if it stays."""
        if self.older_than is not None and now - entry.last_used > self.older_than:
            return f"not used for {span(now - entry.last_used)}"
        if self.max_size is not None and total > self.max_size:
            return (
                f"least recently used while the caches hold {format_si_bytes(total)}, over "
                f"--max-size {format_si_bytes(self.max_size)}"
            )
        return None


@dataclass(frozen=True)
class Pruned:
    """One entry the rule chose: why, and why it stays after all (None: it went, or in a
    dry run would go)."""

    entry: CacheEntry
    why: str
    kept: str | None


#: What is done with a chosen entry: None once removed (or removable), else why it stays.
Attempt = Callable[[CacheEntry], str | None]


def prune(listing: CacheListing, rule: PruneRule, now: float, attempt: Attempt) -> list[Pruned]:
    """The entries ``rule`` chooses, least recently used first, each given to ``attempt``
    (:func:`remove_entry`, or :func:`probe` for a dry run) unless a live run uses it."""
    total = listing.size
    chosen = []
    for entry in sorted(listing.entries, key=lambda e: (e.last_used, e.kind, e.name)):
        why = rule.why(entry, total, now)
        if why is None:
            continue
        if entry.in_use:
            kept: str | None = (
                f"in use by live run {', '.join(Path(r).name for r in entry.live_runs)}"
            )
        else:
            kept = attempt(entry)
        chosen.append(Pruned(entry, why, kept))
        if kept is None:
            total -= entry.size
    return chosen


def prune_caches(
    rule: PruneRule,
    dry_run: bool = False,
    output_dirs: Iterable[Path] = (),
    kinds: Iterable[str] | None = None,
) -> tuple[CacheListing, list[Pruned]]:
    """The caches as listed (:func:`~.listing.list_caches`) and what ``rule`` removed from
    them, after :func:`tidy`; or with ``dry_run``, what it would remove, removing nothing."""
    if not dry_run:
        tidy()
    listing = list_caches(output_dirs, kinds)
    return listing, prune(listing, rule, time.time(), probe if dry_run else remove_entry)


def probe(entry: CacheEntry) -> str | None:
    """A dry run's attempt: why ``entry`` would stay (a process uses it now), or None."""
    if entry.kind == HEATMAPS:
        return None
    with claimed(entry.path) as free:
        return None if free else "in use by a process now"


def remove_entry(entry: CacheEntry) -> str | None:
    """Remove ``entry`` whole (see the module's docstring): None once it is gone, else
    why it stays."""
    try:
        if entry.kind == HEATMAPS:  # in its run's folder: the run is its one user
            if LiveRuns().live(entry.runs or ()):
                return "in use by its run, alive again"
            # one file: unlinked at once (a rename to trash, which tidy() never looks
            # for in run folders, could be left behind by a killed pruner)
            entry.path.unlink(missing_ok=True)
            trash = None
        else:
            with claimed(entry.path) as free:
                if not free:
                    return "in use by a process now"
                uses = read_uses(entry.path)
                if uses is not None and uses.last_used > entry.last_used:
                    return "used since it was listed"
                if uses is not None and LiveRuns().live(uses.runs):
                    return "in use by a live run"
                trash = _to_trash(entry.path)
    except OSError as err:
        return f"cannot be removed ({err.strerror or err}); check the folder's permissions"
    if trash is not None:  # the lock let go: a user waits only for the rename
        _remove(trash)
    return None


def _to_trash(path: Path) -> Path | None:
    """``path`` renamed to a hidden name beside it, that name (None: gone already)."""
    trash = path.with_name(f"{TRASH_PREFIX}{path.name}.{os.getpid()}-{secrets.token_hex(4)}")
    try:
        path.rename(trash)
    except FileNotFoundError:
        return None
    return trash


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def tidy() -> None:
    """Delete what a killed pruner left (trash), and the records and locks of entries
    that are gone (removed by hand, or torn and dropped by their cache), each once no
    process holds it."""
    for folder in kind_folders():
        if not folder.is_dir():
            continue
        for trash in folder.glob(f"{TRASH_PREFIX}*"):
            _remove(trash)
        uses = folder / USES_FOLDER
        names = {unquote(p.name.rsplit(".", 1)[0]) for p in uses.glob("*")} if uses.is_dir() else ()
        for name in sorted(names):
            entry = folder / name
            if not entry.exists():
                with claimed(entry):
                    pass  # let go with the entry still gone: its record and lock go
