"""``workbench runs``: every run of an output folder, one line each, newest first.

A thin adapter over :mod:`workbench.core.experiments.table`; only argparse at import.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.cli.options import OUTPUT_DIR_FLAG, Flag, add_command

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers

FLAGS: tuple[Flag, ...] = (
    OUTPUT_DIR_FLAG,
    ("--json", {"action": "store_true", "help": "one JSON list, for scripts"}),
)


def add_parser(subparsers: Subparsers) -> None:
    """Register ``workbench runs`` on the CLI's subparsers."""
    add_command(
        subparsers, "runs", help="list the runs: settings changed, training, scores", flags=FLAGS
    )


def run(args: argparse.Namespace) -> int:
    """Print the runs (or say there are none, and how to make one)."""
    import json
    from pathlib import Path

    from workbench.core.experiments.table import RUN_ROW_HEADER, list_runs, run_row_line

    rows = list_runs(Path(args.output_dir).expanduser())
    if args.json:
        print(json.dumps([row.to_dict() for row in rows], ensure_ascii=False, indent=1))
        return 0
    if not rows:
        print(
            f"no runs under {args.output_dir}/runs yet; start one with "
            "workbench train --headless --preset demo"
        )
        return 0
    print(RUN_ROW_HEADER)
    for row in rows:
        print(run_row_line(row))
    return 0
