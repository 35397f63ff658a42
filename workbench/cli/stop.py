"""``workbench stop [RUN]``: stop a live run from any terminal, with a checkpoint.

It leaves a stop request in the run folder (:mod:`workbench.core.live.stop_request`); the
run's writer sees it within a second and stops at the next training step with a
checkpoint, as after Ctrl-C, and ``train --resume`` continues it. Only argparse at import.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.cli.options import OUTPUT_DIR_FLAG, Flag, add_command

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers

FLAGS: tuple[Flag, ...] = (
    ("run", {"nargs": "?", "help": "run id or folder (default: the newest live run)"}),
    OUTPUT_DIR_FLAG,
    (
        "--no-wait",
        {"action": "store_true", "help": "return at once instead of waiting for the stop"},
    ),
    (
        "--timeout",
        {"type": float, "default": 600.0, "metavar": "SECONDS", "help": "longest wait (600)"},
    ),
)


def add_parser(subparsers: Subparsers) -> None:
    """Register ``workbench stop`` on the CLI's subparsers."""
    add_command(
        subparsers, "stop", help="stop a live run at its next step, with a checkpoint", flags=FLAGS
    )


def run(args: argparse.Namespace) -> int:
    """Ask the run to stop, then (unless --no-wait) wait until it has."""
    from pathlib import Path

    from workbench.core.live.liveness import pick_run
    from workbench.core.live.stop_request import request_stop, wait_until_ended
    from workbench.core.run_folder.layout import RunFolder
    from workbench.core.views.live_text import output_dir_flag

    run_dir = pick_run(Path(args.output_dir).expanduser(), args.run, live_only=True)
    live = request_stop(run_dir, "workbench stop")
    print(f"stop requested: {run_dir.name} ({live.why()}) stops at its next step with a checkpoint")
    if args.no_wait:
        return 0
    ended = wait_until_ended(run_dir, args.timeout)
    if ended.live:
        print(f"{run_dir.name} is still {ended.status} after {args.timeout:g} s")
        return 1
    where = output_dir_flag(RunFolder(run_dir).output_root)
    resume = f"; continue it with workbench train --resume{where}"
    print(f"{run_dir.name}: {ended.status}" + (resume if ended.status == "stopped" else ""))
    return 0
