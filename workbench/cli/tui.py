"""``workbench tui``: the full-screen workbench (Textual), with the run flags of the next
Start. Textual is imported inside :func:`run`, so ``workbench --help`` stays quick."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from workbench.cli.flags import add_run_options, config_from_args
from workbench.cli.options import QE_FLAG, add_command, without_flags
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers


def add_parser(sub: Subparsers) -> None:
    """Register ``tui`` on the CLI's subparsers."""
    tui = add_command(sub, "tui", help="the full-screen workbench (Textual)", flags=[QE_FLAG])
    add_run_options(tui)  # with the picking flags: a run's, and the Translate pane's


def run(args: argparse.Namespace) -> int:
    """Open the Textual app; without a terminal, say so and point to the headless run."""
    config = config_from_args(args)
    # The run's picking settings are the Translate pane's too (its candidates drawn with the
    # run's --seed); --pick qe picks by --qe-model, else by the pane's --qe, as in interact.
    from workbench.core.translate.console_session import side_quality
    from workbench.core.translate.picked import PickSettings

    pick = PickSettings.requested(config, config.qe_model or args.qe)
    if pick is not None:  # the pane's picker: a mistyped folder is said before the app
        pick.check_model()
    served = os.environ.get("TEXTUAL_DRIVER", "").endswith(":WebDriver")  # workbench serve
    if not served and not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise WorkbenchError(
            "workbench tui needs an interactive terminal (stdin/stdout are not a TTY); "
            "use `workbench train --headless` for pipes, logs and batch jobs"
        )
    if side := side_quality(args.qe, pick):  # the QE score beside each translation
        side.check()
    from workbench.tui.app import WorkbenchApp

    # In a browser tab a run trains in a process of its own: the tab is only a viewer;
    # it trains with the tab's run flags (--qe is the Translate pane's, not the run's).
    runs = without_flags(args.argv[1:], [QE_FLAG]) if served else None
    app = WorkbenchApp(config, detached_runs=runs, qe_model=args.qe, pick=pick)
    code = app.run() or 0
    if app.keeps_training:  # the terminal went away: the run trains on, here, to its end
        app.wait_for_training()
    for line in app.farewell:
        print(line)
    return code
