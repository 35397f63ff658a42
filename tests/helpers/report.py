"""What a run's report is read with: its summary.json as a dict, and SVG's namespace."""

from __future__ import annotations

import json
from pathlib import Path

SVG = "{http://www.w3.org/2000/svg}"


def summary_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
