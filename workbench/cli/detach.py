"""``workbench train --detach``: the same run in a process of its own, off this terminal.

This process checks the settings, makes (or, with ``--resume``, picks) the run folder,
starts the run detached (:mod:`workbench.core.live.detach`), waits until it holds the
folder, and prints where it is and how to follow and stop it -- within seconds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.core.config import RunConfig
from workbench.errors import WorkbenchError


def run_detached(args: argparse.Namespace, config: RunConfig) -> int:
    """Start the run detached and print the lines that find it again."""
    from workbench.core.live.detach import start_detached, wait_until_held
    from workbench.core.run_folder import LOG_FILE, check_writable, new_run_dir, saved_config
    from workbench.core.train.checkpoints import run_to_resume
    from workbench.core.train.preflight import preflight
    from workbench.core.views.live_text import detached_lines

    output_root = Path(config.output_dir).expanduser()
    check_writable(output_root)
    if args.resume:
        run_dir = run_to_resume(output_root)  # refuses a live one; the lock decides a stale one
        preflight(saved_config(run_dir, config.preset))
    else:
        preflight(config)  # an offline Hub or a wrong path fails here, not in the log
        run_dir = new_run_dir(output_root, config.preset)
    train_args = [a for a in args.argv[1:] if a != "--detach"]  # argv[0] is "train"
    process = start_detached(train_args, run_dir)
    live = wait_until_held(process, run_dir)  # a start that fails names the log that says why
    if not live.live:
        raise WorkbenchError(
            f"the detached run {live.status} at once ({live.why()}); see {run_dir / LOG_FILE}"
        )
    for line in detached_lines(run_dir, process.pid, config.output_dir):
        print(line)
    return 0
