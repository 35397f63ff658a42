"""Writing files and folders so that readers never see half of one.

Resume, the console, the TUI and ``auto`` backend choice read what a run or an export
left behind, possibly while it is still being written or after a kill or a full disk.
Everything is written to a temporary sibling, flushed, then renamed into place.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError


def write_text(path: Path, text: str) -> None:
    """Write a text file atomically: a temporary sibling, flushed, then renamed into place.

    The temporary name carries the process and thread ids, so two processes (two runs
    caching one Hub sample) or two threads never write into each other's temporary file."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> None:
    """Write a binary file atomically (see :func:`write_text`)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


def write_documents(
    folder: Path, files: dict[str, str], what: str, stale: set[str] | None = None
) -> list[Path]:
    """Write a set of text files (a report, a comparison) into ``folder``, each atomically,
    after removing ``stale`` ones (a figure the new version no longer has). A failure is
    one line naming ``what`` could not be written where, and why."""
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name in stale or ():
            (folder / name).unlink(missing_ok=True)
        for name, text in files.items():
            write_text(folder / name, text)
            written.append(folder / name)
    except OSError as err:
        raise WorkbenchError(
            f"cannot write {what} into {folder}: {err.strerror or err}; "
            "check the folder's permissions and free space"
        ) from None
    return written


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (see :func:`write_text`)."""
    write_text(path, json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False, default=str))


def fsync_tree(folder: Path) -> None:
    """Flush every file under ``folder`` to disk, so a rename publishes complete data."""
    for path in folder.rglob("*"):
        if path.is_file():
            with path.open("rb") as fh:
                os.fsync(fh.fileno())


def save_atomically(destination: Path, write: Callable[[Path], object]) -> None:
    """Let ``write`` fill a temporary sibling, flush it, then rename it to ``destination``
    (what ``write`` returns is ignored: ``shutil.copytree`` will do).

    Readers (resume, the console, the TUI) see the old folder or the new one, never half
    of one: a failure part-way (a full disk, a kill) leaves the previous folder as it was
    and only a hidden ``.name.new-*`` sibling behind, which nothing reads.
    """
    parent = destination.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}.new-", dir=parent))
    try:
        write(staging)
        fsync_tree(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    replace_folder(staging, destination)


def replace_folder(complete: Path, destination: Path) -> None:
    """Rename the flushed folder ``complete`` to ``destination``, retiring any old one.

    The old folder is moved aside first and removed only once the new one is in place,
    so at every moment one complete folder (old or new) is there or about to be.
    ``complete`` must be on the same file system (a sibling, or a folder beside it).
    """
    retired = None
    if destination.exists():
        retired = destination.with_name(f".{destination.name}.old-{os.getpid()}-{time.time_ns()}")
        destination.rename(retired)
    complete.rename(destination)
    if retired is not None:
        shutil.rmtree(retired, ignore_errors=True)
