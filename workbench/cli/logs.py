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
    from workbench.core.live.follow import Look

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

    from workbench.core.live.follow import RunReader
    from workbench.core.live.liveness import pick_run
    from workbench.core.run_folder.layout import RunFolder

    run_dir = pick_run(Path(args.output_dir).expanduser(), args.run)
    reader = RunReader(run_dir, events=False)

    def look_and_print() -> Look:
        look = reader.look()
        if look.lines:
            sys.stdout.write("".join(line + "\n" for line in look.lines))
            sys.stdout.flush()
        return look

    look = look_and_print()
    if not reader.has_log():
        log = RunFolder(run_dir).log.name
        print(f"{run_dir.name} has no {log} yet (status: {look.live.status})")
    while args.follow and not look.ended:
        time.sleep(POLL_SECONDS)
        look = look_and_print()
    if args.follow or look.ended:
        why = look.live.why()
        print(f"-- {run_dir.name}: {look.live.status}" + (f" ({why})" if why else ""))
    return 0
