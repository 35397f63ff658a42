"""``workbench cache`` and ``workbench cache prune``: what the workbench keeps on disk to
build again, and freeing it.

A thin adapter over :mod:`workbench.core.caches`; only argparse at import, and no torch at
all (``tests/cli/test_cli_cache.py`` checks it).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.cli.options import OUTPUT_DIR_FLAG, Flag, add_command

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers

#: The flags ``cache`` and ``cache prune`` share.
SHARED: tuple[Flag, ...] = (
    (
        "--output-dir",
        {
            **OUTPUT_DIR_FLAG[1],
            "help": f"{OUTPUT_DIR_FLAG[1]['help']}; their kept heatmap views are listed too",
        },
    ),
    (
        "--kind",
        {
            "action": "append",
            "metavar": "KIND",
            "help": "only this kind: prepared, before, samples, preferences or heatmaps "
            "(repeat for several)",
        },
    ),
    ("--json", {"action": "store_true", "help": "one JSON object, for scripts"}),
)
PRUNE: tuple[Flag, ...] = (
    (
        "--older-than",
        {
            "metavar": "AGE",
            "help": "remove entries not used for longer than AGE: 12h, 30d, 2w (units s, m, "
            "h, d, w; the default, 30d, when --max-size is not given either)",
        },
    ),
    (
        "--max-size",
        {
            "metavar": "SIZE",
            "help": "then remove the least recently used until the caches hold at most "
            "SIZE: 500MB, 10GB, 1.5TB (decimal units, as du --si: 1GB = 10^9 bytes)",
        },
    ),
    (
        "--dry-run",
        {"action": "store_true", "help": "list what would go and the space freed; remove nothing"},
    ),
)


def add_parser(subparsers: Subparsers) -> None:
    """Register ``workbench cache`` and ``cache prune`` on the CLI's subparsers."""
    cache = add_command(
        subparsers,
        "cache",
        help="list what the workbench keeps on disk to build again: size, last use, runs",
        flags=SHARED,
    )
    actions = cache.add_subparsers(dest="cache_action", metavar="ACTION")
    add_command(
        actions,
        "prune",
        help="free space: entries unused for long, then the least recently used; never "
        "what a live run or a reading process uses",
        # given after ``prune`` or before it: a flag left out keeps what came before
        flags=(
            *((name, {**options, "default": argparse.SUPPRESS}) for name, options in SHARED),
            *PRUNE,
        ),
    )


def run(args: argparse.Namespace) -> int:
    """List the caches, or prune them."""
    import json
    import time
    from pathlib import Path

    from workbench.core.caches.kinds import check_kinds
    from workbench.core.caches.listing import list_caches
    from workbench.core.caches.prune import PruneRule, prune_caches
    from workbench.core.caches.text import (
        listing_lines,
        listing_record,
        prune_lines,
        prune_record,
    )

    kinds = check_kinds(args.kind)
    output = [Path(args.output_dir).expanduser()]
    if args.cache_action is None:
        listing = list_caches(output, kinds)
        report = listing_record(listing) if args.json else listing_lines(listing, time.time())
    else:
        rule = PruneRule.of(args.older_than, args.max_size)
        listing, pruned = prune_caches(rule, args.dry_run, output, kinds)
        write = prune_record if args.json else prune_lines
        report = write(pruned, listing, args.dry_run)
    print(json.dumps(report, ensure_ascii=False, indent=1) if args.json else "\n".join(report))
    return 0
