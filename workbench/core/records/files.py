"""Reading the JSON files a run or a model folder may hold or lack, where a missing, torn
or hand-edited file reads as absent rather than failing: a run killed early leaves some
unwritten, and a killed writer leaves a torn last JSONL line."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: Bytes read at a time by :func:`records_from_end`.
BLOCK = 1 << 16


#: A file's (inode, size, modification time), or None when it is not there.
Stamp = tuple[int, int, int] | None


def file_stamp(path: Path) -> Stamp:
    """What says a file changed without reading it: a reader that keeps what it read
    reads again only when the stamp differs (replaced, grown, rewritten)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def read_json_dict(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``, or None when missing, unreadable or not an object.

    For the files a run or a model folder may hold or lack (a run killed early, a model
    saved elsewhere): readers treat them all as optional.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # ValueError: not JSON, or not UTF-8 (a torn file)
        return None
    return data if isinstance(data, dict) else None


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file; unreadable lines (a killed writer) are skipped."""
    return read_jsonl_counted(path)[0]


def read_jsonl_counted(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The JSON objects of a JSONL file and how many lines were skipped as unreadable
    (a torn last line of a killed writer), for a reader that says so."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return [], 0
    records = []
    skipped = 0
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            skipped += bool(line.strip())
            continue
        if isinstance(record, dict):
            records.append(record)
        else:
            skipped += 1
    return records, skipped


def records_from_end(path: Path, block: int = BLOCK) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file from its last line to its first, read a block at
    a time from the end: a run's last events (how it ended) without parsing a log of
    300,000 steps. Unreadable lines are skipped; a missing file has none."""
    try:
        fh = path.open("rb")
    except OSError:
        return
    with fh:
        end = fh.seek(0, os.SEEK_END)
        rest = b""  # the start of a line whose beginning is in the block before
        while end > 0:
            start = max(0, end - block)
            fh.seek(start)
            lines = (fh.read(end - start) + rest).split(b"\n")
            rest = lines.pop(0) if start else b""
            end = start
            for line in reversed(lines):
                try:
                    record = json.loads(line)
                except ValueError:  # torn, blank or not UTF-8
                    continue
                if isinstance(record, dict):
                    yield record
