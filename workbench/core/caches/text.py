"""The caches as text: ``workbench cache``'s table and JSON, and what ``cache prune``
removed or would remove, in the words and units both front ends print."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from workbench.core.caches.amounts import ago
from workbench.core.caches.kinds import TITLES
from workbench.core.caches.listing import CacheEntry, CacheListing
from workbench.core.caches.prune import Pruned
from workbench.core.views.numbers import format_si_bytes

#: Run folders named in a row; more are counted.
RUNS_NAMED = 2
#: The widths of the table's columns (the last one takes the rest).
WIDTHS = (12, 40, 10, 15)
HEADER = ("KIND", "ENTRY", "SIZE", "LAST USE", "RUNS")


def iso(when: float) -> str:
    """A Unix time as an ISO 8601 local time with its offset, to the second."""
    return datetime.fromtimestamp(when).astimezone().isoformat(timespec="seconds")


def entry_label(entry: CacheEntry, width: int = WIDTHS[1]) -> str:
    """The entry's name (a digest's first 12 characters where the entry says what it was
    made from, and that), and ``(partial)`` for a read or build to go on from; cut in the
    middle to ``width``."""
    label = f"{entry.name[:12]} {entry.what}" if entry.what else entry.name
    label += "" if entry.complete else " (partial)"
    if len(label) <= width:
        return label
    half = (width - 1) // 2
    return label[:half] + "…" + label[len(label) - (width - 1 - half) :]


def runs_text(entry: CacheEntry) -> str:
    """The runs that used it: their names (live ones marked), a count when many, or
    ``unknown`` for an entry made before uses were recorded."""
    if entry.runs is None:
        return "unknown"
    if not entry.runs:
        return "none"
    live = f", {len(entry.live_runs)} live" if entry.live_runs else ""
    if len(entry.runs) > RUNS_NAMED:
        return f"{len(entry.runs)} runs{live}"
    return ", ".join(
        Path(run).name + (" (live)" if run in entry.live_runs else "") for run in entry.runs
    )


def row(cells: tuple[str, ...]) -> str:
    """One line of the table."""
    padded = [cell.ljust(width) for cell, width in zip(cells[:-1], WIDTHS, strict=True)]
    return "  ".join([*padded, cells[-1]])


def listing_lines(listing: CacheListing, now: float) -> list[str]:
    """The table: one row an entry, then each kind's total and the whole."""
    if not listing.entries:
        return [f"no cache entries under {listing.root}"]
    lines = [f"caches under {listing.root}", row(HEADER)]
    for entry in listing.entries:
        lines.append(
            row(
                (
                    entry.kind,
                    entry_label(entry),
                    format_si_bytes(entry.size),
                    ago(now - entry.last_used),
                    runs_text(entry),
                )
            )
        )
    lines.append("")
    for kind, title in TITLES.items():
        entries = listing.of_kind(kind)
        if entries:
            lines.append(f"{title}: {_count(entries)}")
    lines.append(f"total: {_count(list(listing.entries))}")
    return lines


def _count(entries: list[CacheEntry]) -> str:
    return f"{_entries(len(entries))}, {format_si_bytes(sum(e.size for e in entries))}"


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"


def entry_record(entry: CacheEntry) -> dict[str, Any]:
    """One entry for ``--json``: sizes in bytes, last use as ISO 8601 and Unix time."""
    return {
        "kind": entry.kind,
        "name": entry.name,
        "path": str(entry.path),
        "what": entry.what,
        "complete": entry.complete,
        "bytes": entry.size,
        "apparent_bytes": entry.apparent_size,
        "last_used": iso(entry.last_used),
        "last_used_unix": entry.last_used,
        "last_used_from": "record" if entry.recorded else "modification time",
        "runs": list(entry.runs) if entry.runs is not None else None,
        "live_runs": list(entry.live_runs),
    }


def listing_record(listing: CacheListing) -> dict[str, Any]:
    """The whole listing for ``--json``: the root, each entry, each kind's total."""
    return {
        "root": str(listing.root),
        "entries": [entry_record(entry) for entry in listing.entries],
        "kinds": {
            kind: {
                "title": title,
                "entries": len(listing.of_kind(kind)),
                "bytes": sum(e.size for e in listing.of_kind(kind)),
            }
            for kind, title in TITLES.items()
        },
        "total": {"entries": len(listing.entries), "bytes": listing.size},
    }


def prune_lines(pruned: list[Pruned], listing: CacheListing, dry_run: bool) -> list[str]:
    """What went (or would go) and why, what stayed and why, and the space freed."""
    gone = [p for p in pruned if p.kept is None]
    verb = "would remove" if dry_run else "removed"
    lines = [
        f"{verb} {p.entry.kind} {entry_label(p.entry)} ({format_si_bytes(p.entry.size)}, {p.why})"
        for p in gone
    ]
    lines += [
        f"kept {p.entry.kind} {entry_label(p.entry)} ({format_si_bytes(p.entry.size)}): {p.kept}"
        for p in pruned
        if p.kept is not None
    ]
    freed = sum(p.entry.size for p in gone)
    left = listing.size - freed
    remaining = len(listing.entries) - len(gone)
    head = "would free" if dry_run else "freed"
    lines.append(
        f"{head} {format_si_bytes(freed)} in {_entries(len(gone))}; "
        f"{format_si_bytes(left)} left in {_entries(remaining)}"
    )
    return lines


def prune_record(pruned: list[Pruned], listing: CacheListing, dry_run: bool) -> dict[str, Any]:
    """What ``prune_lines`` says, for ``--json``."""
    gone = [p for p in pruned if p.kept is None]
    return {
        "dry_run": dry_run,
        "removed": [{**entry_record(p.entry), "why": p.why} for p in gone],
        "kept": [
            {**entry_record(p.entry), "why": p.why, "kept": p.kept}
            for p in pruned
            if p.kept is not None
        ],
        "freed_bytes": sum(p.entry.size for p in gone),
        "left_bytes": listing.size - sum(p.entry.size for p in gone),
    }
