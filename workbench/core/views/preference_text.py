"""The preference data of ``train --objective best|cpo|dpo`` in one line, for the run's
lines: how many sources were ranked, by what, what was kept and skipped, and where the
ranked lines are cached (or that they were stopped part-way, kept for the resume)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PreferenceCounts:
    """What the line says: the sources, candidates and ranker, and what came of them."""

    objective: str
    sources: int  # training sources asked
    ranked: int  # of them ranked (all, unless stopped)
    candidates: int  # drawn per source
    ranker: str  # "chrF", "CometKiwi-22"
    against_reference: bool
    kept: int  # records chosen
    skipped: int
    cache: str
    reused: bool
    stopped: bool


def preferences_line(counts: PreferenceCounts) -> str:
    """``preferences: 144 sources x 8 candidates ranked by chrF (against the reference):
    140 pairs, 4 skipped (no preference); cached in …``."""
    c = counts
    if c.stopped:
        return (
            f"preferences: stopped after {c.ranked:,} of {c.sources:,} sources ranked by "
            f"{c.ranker}; kept in {c.cache}, where the next run with the same settings resumes"
        )
    how = "against the reference" if c.against_reference else "without a reference"
    if c.objective == "best":
        made, why = "targets (the top candidate)", "no candidate"
    else:
        made, why = "pairs", "no preference"
    where = f"reused from {c.cache}" if c.reused else f"cached in {c.cache}"
    return (
        f"preferences: {c.sources:,} sources x {c.candidates} candidates ranked by "
        f"{c.ranker} ({how}): {c.kept:,} {made}, {c.skipped:,} skipped ({why}); {where}"
    )
