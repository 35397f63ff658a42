"""A run started in a process of its own: ``train --detach``, and Start in a browser tab.

Its folder is made (or, to resume, picked) here first, so the caller can name it at once;
the process is :func:`workbench.core.live.detach.start_detached`'s, and this returns once
it holds the folder.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from workbench.core.config.run_config import RunConfig
from workbench.core.live.detach import start_detached, wait_until_held
from workbench.core.run_folder import LOG_FILE, new_run_dir
from workbench.core.train.checkpoints import run_to_resume
from workbench.errors import WorkbenchError


def start_detached_run(
    train_args: list[str], config: RunConfig, resume: bool
) -> tuple[Path, subprocess.Popen[bytes]]:
    """``workbench train TRAIN_ARGS`` detached, in a new run folder (or the run to resume);
    its folder and process once it holds the folder, or one line if it failed at once."""
    root = Path(config.output_dir).expanduser()
    run_dir = run_to_resume(root) if resume else new_run_dir(root, config.preset)
    process = start_detached(train_args, run_dir)
    live = wait_until_held(process, run_dir)  # a start that fails names the log
    if not live.live:
        raise WorkbenchError(
            f"the detached run {live.status} at once ({live.why()}); see {run_dir / LOG_FILE}"
        )
    return run_dir, process
