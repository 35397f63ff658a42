"""How a run started in the background is announced: the same lines after
``train --detach`` and after the TUI hands its run over."""

from __future__ import annotations

from pathlib import Path

from workbench.core.run_folder import LOG_FILE, output_dir_flag


def detached_lines(run_dir: Path, pid: int, output_dir: str | Path) -> list[str]:
    """Where the run is, and the commands to follow, watch and stop it."""
    where = output_dir_flag(output_dir)
    name = run_dir.name
    return [
        f"run folder: {run_dir}",
        f"training in the background: pid {pid}, its lines in {run_dir / LOG_FILE}",
        f"  follow it:  workbench logs {name} --follow{where}",
        f"  watch it:   workbench tui{where}   (or workbench runs{where})",
        f"  stop it:    workbench stop {name}{where}   (with a checkpoint; --resume goes on)",
    ]
