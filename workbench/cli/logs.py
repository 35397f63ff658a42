"""``workbench logs [RUN] [--follow]``: a run's lines from any terminal, as it goes.

For SSH without the TUI: the lines the run writes to ``train.log`` in its folder (the same
lines ``train --headless`` prints), then, with ``--follow``, each new line as it comes
until the run ends, and how it ended. Only argparse at import.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.cli.options import OUTPUT_DIR_FLAG, Flag, add_command

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers

FLAGS: tuple[Flag, ...] = (
    (
        "run",
        {"nargs": "?", "help": "run id or folder (default: the newest live run, else the newest)"},
    ),
    (
        "--follow",
        {"action": "store_true", "help": "keep printing new lines until the run ends"},
    ),
    OUTPUT_DIR_FLAG,
)
#: Seconds between two looks at a followed log.
POLL_SECONDS = 0.5


def add_parser(subparsers: Subparsers) -> None:
    """Register ``workbench logs`` on the CLI's subparsers."""
    add_command(subparsers, "logs", help="print a run's lines; --follow a live one", flags=FLAGS)


def run(args: argparse.Namespace) -> int:
    """Print the log, and follow it while the run lives."""
    import sys
    import time
    from pathlib import Path

    from workbench.core.live.follow import GrowingFile
    from workbench.core.live.liveness import pick_run, run_liveness
    from workbench.core.run_folder.layout import RunFolder

    run_dir = pick_run(Path(args.output_dir).expanduser(), args.run)
    log = GrowingFile(RunFolder(run_dir).log)

    def print_new() -> None:
        lines = log.read_new_text()
        if lines:
            sys.stdout.write("".join(line + "\n" for line in lines))
            sys.stdout.flush()

    print_new()
    live = run_liveness(run_dir)
    if not log.path.is_file():
        print(f"{run_dir.name} has no {log.path.name} yet (status: {live.status})")
    while args.follow and live.live:
        time.sleep(POLL_SECONDS)
        print_new()
        live = run_liveness(run_dir)
    print_new()
    if args.follow or not live.live:
        why = live.why()
        print(f"-- {run_dir.name}: {live.status}" + (f" ({why})" if why else ""))
    return 0
