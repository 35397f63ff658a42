"""What the picking flags take, and the one sentence that refuses anything else.

Kept apart from the metrics and the MBR code so that a front end can build its flags
(``--help`` included) without importing numpy or sacreBLEU; the settings, the picker
and the metric loaders all check a value through :func:`check_choice`, so each refusal
is worded once.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.errors import WorkbenchError

#: What ``--pick`` takes.
PICK_METHODS = ("qe", "mbr")
#: The utilities ``--utility`` takes, and the reference-free metrics ``--qe-metric`` takes.
UTILITIES = ("chrf", "bleu", "comet", "metricx")
QE_METRICS = ("cometkiwi", "metricx")
#: Where candidates come from (``--candidates-from``).
CANDIDATE_SOURCES = ("sample", "beam", "both")
#: ``--candidates`` when a pick is asked for and no count is given.
DEFAULT_CANDIDATES = 8


def check_choice(flag: str, value: str | None, choices: Sequence[str]) -> None:
    """Refuse ``value`` for ``flag`` in one line unless it is one of ``choices``."""
    if value not in choices:
        raise WorkbenchError(f"{flag} must be one of {', '.join(choices)}, got '{value}'")
