"""A sweep's own events (a trial started, a trial ended, a note) and their one wording."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.experiments.sweep.space import point_text

# --------------------------------------------------------------------------- events and text


@dataclass(frozen=True)
class TrialStarted:
    """A worker took a point and is about to train it."""

    number: int  # Optuna's trial number
    position: int  # how many points are settled, counting this one
    total: int
    params: dict[str, Any]
    run_dir: str
    resumed: bool  # continues a cut-short trial's run folder


@dataclass(frozen=True)
class TrialEnded:
    """A trial's outcome (``finished``, ``stopped``, ``failed``, ``lost``: its worker lost
    the run folder's lease) and the best so far."""

    number: int
    position: int
    total: int
    params: dict[str, Any]
    run_dir: str
    outcome: str
    value: float | None
    reason: str | None
    best: tuple[int, float] | None  # (trial number, value) of the best finished trial


@dataclass(frozen=True)
class SweepNote:
    """A line of the sweep's own: waiting for other workers, a trial taken for dead."""

    text: str
    level: str = "info"


SweepEvent = TrialStarted | TrialEnded | SweepNote


def sweep_lines(event: SweepEvent) -> list[str]:
    """The one wording of a sweep's own events, for plain lines."""
    if isinstance(event, SweepNote):
        return [("warning: " if event.level == "warning" else "") + event.text]
    head = f"trial #{event.number} ({event.position}/{event.total})  {point_text(event.params)}"
    run = Path(event.run_dir).name
    if isinstance(event, TrialStarted):
        how = "continues run" if event.resumed else "run"
        return [f"{head}  → {how} {run}"]
    best = f"  (best so far: trial #{event.best[0]}, {event.best[1]:.2f})" if event.best else ""
    if event.outcome == "finished":
        return [f"{head}  → run {run}  val BLEU {event.value:.2f}{best}"]
    why = f": {event.reason}" if event.reason else ""
    warning = "warning: " if event.outcome == "lost" else ""  # its run went on elsewhere
    return [f"{warning}{head}  → run {run}  {event.outcome}{why}{best}"]


# --------------------------------------------------------------------------- the study's trials
