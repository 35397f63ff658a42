"""``workbench compare RUN_A RUN_B …``: runs side by side with sacreBLEU's paired tests.

A thin adapter over :mod:`workbench.core.experiments.compare`; only argparse at import.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.cli.options import OUTPUT_DIR_FLAG, Flag, add_command

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers

FLAGS: tuple[Flag, ...] = (
    (
        "runs",
        {
            "nargs": "+",
            "metavar": "RUN",
            "help": "two or more run ids (as `workbench runs` lists them) or run folders; "
            "the first is the baseline of every test",
        },
    ),
    OUTPUT_DIR_FLAG,
    (
        "--out",
        {
            "default": None,
            "metavar": "DIR",
            "help": "where to write compare.md and compare.html (default: "
            "<output-dir>/comparisons/<A>_vs_<B>)",
        },
    ),
)


def add_parser(subparsers: Subparsers) -> None:
    """Register ``workbench compare`` on the CLI's subparsers."""
    add_command(
        subparsers,
        "compare",
        help="compare runs: settings, curves, paired significance tests, sentences",
        flags=FLAGS,
    )


def run(args: argparse.Namespace) -> int:
    """Print the comparison and write compare.md / compare.html."""
    show_comparison(args.runs, args.output_dir, args.out)
    return 0


def show_comparison(runs: list[str], output_dir: str, out: str | None = None) -> None:
    """Print the comparison of ``runs`` and write its files (also the end of a sweep)."""
    from pathlib import Path

    from workbench.core.experiments.compare.cells import COMPARE_HTML, COMPARE_MD
    from workbench.core.experiments.compare.read import build_comparison, default_folder
    from workbench.core.experiments.compare.render import render_text, write_comparison

    comparison = build_comparison(runs, output_dir)
    print(render_text(comparison), end="")
    folder = Path(out).expanduser() if out else default_folder(comparison)
    write_comparison(comparison, folder)
    print(
        f"\nwrote {folder / COMPARE_MD} and {folder / COMPARE_HTML} (self-contained: open "
        "it in a browser)"
    )
