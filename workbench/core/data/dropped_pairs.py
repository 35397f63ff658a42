"""The pairs cleaning took out, kept in the run folder so a user can see what and why.

``dropped_pairs.jsonl`` holds one ``{"rule", "source", "target", "kept"}`` object per
pair, in the order cleaning met them; ``kept`` marks a long pair that was only counted.
The report shows a few per rule from it; the Dataset pane shows them all, from the data.
"""

from __future__ import annotations

import json
from pathlib import Path

from workbench.core.atomic import write_text
from workbench.core.data.cleaning import CleaningReport, Dropped
from workbench.core.records.files import read_jsonl_counted
from workbench.core.records.typed import decode
from workbench.core.run_folder.layout import RunFolder


def write_dropped_pairs(run_dir: Path, report: CleaningReport) -> None:
    """Write the report's pairs to ``run_dir/dropped_pairs.jsonl`` (atomically)."""
    lines = (json.dumps(d.to_dict(), ensure_ascii=False) for d in report.dropped)
    write_text(RunFolder(run_dir).dropped_pairs, "".join(f"{line}\n" for line in lines))


def read_dropped_pairs(run_dir: Path, notes: list[str] | None = None) -> list[Dropped]:
    """The pairs a run's cleaning took out ([] for a run from before cleaning); a line that
    does not read is skipped, and said in ``notes``."""
    path = RunFolder(run_dir).dropped_pairs
    records, torn = read_jsonl_counted(path)
    if torn and notes is not None:
        notes.append(f"{path.name}: {torn} line(s) that are not JSON objects skipped")
    found = (
        decode(Dropped, record, notes, f"{path.name} line {n}")
        for n, record in enumerate(records, 1)
    )
    return [d for d in found if d is not None]
