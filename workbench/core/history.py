"""The console history: every translation tried in ``interact`` or the TUI, one JSON line each.

Appended as it happens, so a crash or a closed SSH session never loses what the user
tried; the run report reads it back and matches each line to the run whose model made it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.core.translation import Translation, Translator


def append_history(
    path: Path, model: str, item: Translation, translator: Translator | None = None
) -> None:
    """Append one translation to the JSONL history (created on first use).

    The record names the run that trained the model as well as the model folder:
    ``best_model/`` is replaced by every newer run, and the run report must know which
    run a line really belongs to.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "model": model,
        "run_dir": translator.run_dir if translator else None,
        "backend": translator.backend.name if translator else "",
        "source": item.source,
        "translation": item.text,
        "seconds": round(item.seconds, 3),
        "notices": item.notices,
    }
    with path.open("a", encoding="utf-8", errors="replace") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        fh.flush()
