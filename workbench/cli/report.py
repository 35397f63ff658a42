"""``workbench report``: write the hand-in report of a run into its folder.

A thin adapter over :mod:`workbench.core.report.read`; only argparse at import, so
``workbench --help`` stays instant (torch loads for the heatmap, inside ``run``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.cli.options import Flag, add_command
from workbench.core.translate.judgements import CONSOLE_CHOICES

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers

HELP = "write report.md and report.html for a run (hand-in ready)"
DESCRIPTION = (
    "Write report.md, a self-contained report.html and SVG figures into a run "
    "folder: settings, loss/BLEU per epoch with curves, BLEU before vs after, the "
    "samples, the console translations and an attention heatmap. Works offline."
)
FLAGS: tuple[Flag, ...] = (
    (
        "run_dir",
        {
            "nargs": "?",
            "metavar": "RUN_DIR",
            "help": "run folder (default: the newest finished run)",
        },
    ),
    (
        "--sentence",
        {
            "metavar": "TEXT",
            "help": "sentence for the attention heatmap (default: the first console "
            "translation of this run, else the first sample)",
        },
    ),
    (
        "--console",
        {
            "choices": CONSOLE_CHOICES,
            "default": "auto",
            "help": "console lines to list, each once with a count: judged, all, or auto "
            "(default: the judged ones when any, else all)",
        },
    ),
    (
        "--output-dir",
        {
            "default": None,
            "metavar": "DIR",
            "help": "where runs and console_history.jsonl live (default: the run "
            "folder's own, else translation_output)",
        },
    ),
)


def add_parser(subparsers: Subparsers) -> None:
    """Register ``workbench report`` on the CLI's subparsers."""
    add_command(subparsers, "report", HELP, DESCRIPTION, FLAGS)


def run(args: argparse.Namespace) -> int:
    """Find the run, build the report, write it, print the paths."""
    from workbench.core.report.write import create_report

    report, written = create_report(args.run_dir, args.output_dir, args.sentence, args.console)
    for note in report.notes:
        print(f"note: {note}")
    if report.attention.missing:
        print(f"note: no heatmap: {report.attention.missing}")
    for path in written:
        print(f"wrote {path}")
    return 0
