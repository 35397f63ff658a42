"""Reading the JSON files a run or a model folder may hold or lack, where a missing, torn
or hand-edited file reads as absent rather than failing: a run killed early leaves some
unwritten, and a killed writer leaves a torn last JSONL line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_json_dict(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``, or None when missing, unreadable or not an object.

    For the files a run or a model folder may hold or lack (a run killed early, a model
    saved elsewhere): readers treat them all as optional.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
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
