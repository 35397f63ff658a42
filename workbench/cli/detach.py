"""``workbench train --detach``: the same run in a process of its own, off this terminal.

This process checks the settings, makes (or, with ``--resume``, picks) the run folder,
starts the run detached (:mod:`workbench.core.live.detach`), waits until it holds the
folder, and prints where it is and how to follow and stop it -- within seconds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.core.config.run_config import RunConfig


def run_detached(args: argparse.Namespace, config: RunConfig) -> int:
    """Start the run detached and print the lines that find it again."""
    from workbench.core.run_folder import check_writable, saved_config
    from workbench.core.train.checkpoints import run_to_resume
    from workbench.core.train.detached_run import start_detached_run
    from workbench.core.train.preflight import preflight
    from workbench.core.views.live_text import detached_lines

    output_root = Path(config.output_dir).expanduser()
    check_writable(output_root)
    if args.resume:  # an offline Hub or a wrong path fails here, not in the log
        preflight(saved_config(run_to_resume(output_root), config.preset))
    else:
        preflight(config)
    train_args = [a for a in args.argv[1:] if a != "--detach"]  # argv[0] is "train"
    run_dir, process = start_detached_run(train_args, config, args.resume)
    for line in detached_lines(run_dir, process.pid, config.output_dir):
        print(line)
    return 0
