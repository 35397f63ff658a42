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
from workbench.core.run_files import DROPPED_PAIRS_FILE


def write_dropped_pairs(run_dir: Path, report: CleaningReport) -> None:
    """Write the report's pairs to ``run_dir/dropped_pairs.jsonl`` (atomically)."""
    lines = (json.dumps(d.to_dict(), ensure_ascii=False) for d in report.dropped)
    write_text(run_dir / DROPPED_PAIRS_FILE, "".join(f"{line}\n" for line in lines))


def read_dropped_pairs(run_dir: Path) -> list[Dropped]:
    """The pairs a run's cleaning took out ([] for a run from before cleaning, or an
    unreadable line skipped)."""
    path = run_dir / DROPPED_PAIRS_FILE
    if not path.is_file():
        return []
    found: list[Dropped] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
            found.append(
                Dropped(
                    str(record["rule"]),
                    str(record["source"]),
                    str(record["target"]),
                    bool(record.get("kept", False)),
                )
            )
        except (ValueError, KeyError, TypeError):
            continue
    return found
