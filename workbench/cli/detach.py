"""``workbench train --detach``: the same run in a process of its own, off this terminal.

This process checks the settings, makes (or, with ``--resume``, picks) the run folder,
starts the run detached (:mod:`workbench.core.live.detach`), waits until it holds the
folder, and prints where it is and how to follow and stop it -- within seconds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.core.config import DEFAULT_OUTPUT_DIR, RunConfig


def run_detached(args: argparse.Namespace, config: RunConfig) -> int:
    """Start the run detached and print the lines that find it again."""
    from workbench.core.live.detach import start_detached, wait_until_held
    from workbench.core.live.liveness import run_liveness
    from workbench.core.live.run_log import LOG_FILE
    from workbench.core.live.writer import RunFolderBusy, busy_message
    from workbench.core.run_folder import check_writable, new_run_dir, saved_config
    from workbench.core.train.checkpoints import run_to_resume
    from workbench.core.train.preflight import preflight

    output_root = Path(config.output_dir).expanduser()
    check_writable(output_root)
    if args.resume:
        run_dir = run_to_resume(output_root)
        live = run_liveness(run_dir)
        if live.live:
            raise RunFolderBusy(busy_message(run_dir, live.record))
        preflight(saved_config(run_dir, config.preset))
    else:
        preflight(config)  # an offline Hub or a wrong path fails here, not in the log
        run_dir = new_run_dir(output_root, config.preset)
    train_args = [a for a in args.argv[1:] if a != "--detach"]  # argv[0] is "train"
    process = start_detached(train_args, run_dir)
    wait_until_held(process, run_dir)  # a start that fails names the log that says why
    where = "" if config.output_dir == DEFAULT_OUTPUT_DIR else f" --output-dir {config.output_dir}"
    name = run_dir.name
    print(f"run folder: {run_dir}")
    print(f"training in the background: pid {process.pid}, its lines in {run_dir / LOG_FILE}")
    print(f"  follow it:  workbench logs {name} --follow{where}")
    print(f"  watch it:   workbench tui{where}   (or workbench runs{where})")
    print(f"  stop it:    workbench stop {name}{where}   (with a checkpoint; --resume goes on)")
    return 0
