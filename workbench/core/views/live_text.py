"""How a line tells the user to find a run again: the commands that follow, watch and
stop it, with the ``--output-dir`` they need. The same lines announce a run started in
the background (``train --detach``, a TUI that hands its run over), and the same flag
ends the hints of a refused second writer, ``stop`` and ``report``."""

from __future__ import annotations

from pathlib import Path

from workbench.core.config.run_config import DEFAULT_OUTPUT_DIR
from workbench.core.run_folder.layout import RunFolder


def output_dir_flag(output_root: Path | str) -> str:
    """`` --output-dir DIR`` for a command a line prints, or nothing for the default."""
    return "" if str(output_root) == DEFAULT_OUTPUT_DIR else f" --output-dir {output_root}"


def detached_lines(run_dir: Path, pid: int, output_dir: str | Path) -> list[str]:
    """Where the run is, and the commands to follow, watch and stop it."""
    where = output_dir_flag(output_dir)
    name = run_dir.name
    return [
        f"run folder: {run_dir}",
        f"training in the background: pid {pid}, its lines in {RunFolder(run_dir).log}",
        f"  follow it:  workbench logs {name} --follow{where}",
        f"  watch it:   workbench tui{where}   (or workbench runs{where})",
        f"  stop it:    workbench stop {name}{where}   (with a checkpoint; --resume goes on)",
    ]
