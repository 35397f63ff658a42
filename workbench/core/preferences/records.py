"""A source's ranked candidates, the preference chosen from them, and ``preferences.jsonl``.

A :class:`RankedSource` is what ranking gives for one training pair and what the cache
keeps: the source, its reference (None for a source alone), the reference's score under
the ranker, and the model's distinct candidates with their scores and how often each was
drawn. It holds no choice, so one ranking serves every objective and every beta.

:func:`choose` turns it into a :class:`PreferenceRecord` for an objective:

- ``best``: chosen is the top candidate (the model's own, never the reference), rejected
  the worst one. A source whose candidates all tie still has a top candidate to train on,
  so it is kept (chosen may then equal rejected); only a source with no candidate (an
  empty line) is skipped.
- ``cpo`` and ``dpo``: the pool is the reference (where there is one) and the candidates;
  chosen is the best of the pool by the ranker, rejected the worst. A candidate that is
  the reference's text is the reference. When chosen and rejected are one text, or their
  scores tie, there is no preference to learn: the source is skipped (None), and counted
  by the caller.

Ties are broken by one total order, the same on every run: better score first, then the
reference before a candidate, then the candidate drawn more often, then the one that came
first (beam search's n-best before samples, as :class:`~workbench.core.picking.picks.Candidates`
keeps them). Chosen is the first of that order and rejected the last, so for ``cpo`` and
``dpo`` chosen is never worse than rejected by the ranker (its raw score is >= rejected's
when higher is better, <= when lower is, as for MetricX).

``preferences.jsonl`` holds one JSON object a line, one per source kept::

    {"source", "reference", "reference_score", "candidates": [{"text", "score", "count"}],
     "chosen", "rejected", "chosen_score", "rejected_score", "objective",
     "higher_is_better", "ranked_by"}

``reference`` and ``reference_score`` are null for a source alone; scores are the ranker's
raw scores, on its own scale, in the direction ``higher_is_better`` says; ``ranked_by`` is
the ranker's name (``chrF``, ``CometKiwi-22``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.atomic import write_text
from workbench.core.records.typed import decode
from workbench.errors import WorkbenchError

#: The objectives that train on preferences chosen here (``sft`` trains on the references).
OBJECTIVES: tuple[str, ...] = ("best", "cpo", "dpo")


@dataclass(frozen=True)
class RankedCandidate:
    """One distinct candidate, its score under the ranker, and how often it was drawn."""

    text: str
    score: float
    count: int = 1


@dataclass(frozen=True)
class RankedSource:
    """One training source's reference and candidates, each scored by the ranker."""

    source: str
    reference: str | None
    reference_score: float | None
    candidates: list[RankedCandidate] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object a cache line holds."""
        return asdict(self)


@dataclass(frozen=True)
class PreferenceRecord:
    """A ranked source with its chosen and rejected translation for one objective."""

    source: str
    reference: str | None
    reference_score: float | None
    candidates: list[RankedCandidate]
    chosen: str
    rejected: str
    chosen_score: float
    rejected_score: float
    objective: str
    higher_is_better: bool
    #: The ranker's name, as ``preferences.jsonl`` says it ("" where not given).
    ranked_by: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object a line of ``preferences.jsonl`` holds."""
        return asdict(self)


@dataclass(frozen=True)
class _Entry:
    """One member of the pool a choice is made from, with its place in the tie order."""

    text: str
    score: float
    is_reference: bool
    count: int
    order: int

    def key(self, higher_is_better: bool) -> tuple[float, int, int, int]:
        """The sort key of the tie order: best score, reference, most drawn, first come."""
        score = -self.score if higher_is_better else self.score
        return score, 0 if self.is_reference else 1, -self.count, self.order


def check_objective(objective: str) -> None:
    """A ValueError (a caller's bug: the settings were checked) for what is not one of
    :data:`OBJECTIVES`."""
    if objective not in OBJECTIVES:
        raise ValueError(f"no preference objective {objective!r}; one of {OBJECTIVES}")


def choose(
    ranked: RankedSource, objective: str, metric_higher_is_better: bool, ranked_by: str = ""
) -> PreferenceRecord | None:
    """The preference of ``ranked`` for ``objective`` (``best``, ``cpo`` or ``dpo``), or
    None when it has none to learn (see the module's docstring for the rules and ties)."""
    check_objective(objective)
    pool = [
        _Entry(c.text, c.score, False, c.count, i)
        for i, c in enumerate(ranked.candidates)
        if objective == "best" or c.text != ranked.reference
    ]
    if objective != "best" and ranked.reference is not None and ranked.reference_score is not None:
        pool.append(_Entry(ranked.reference, ranked.reference_score, True, 0, -1))
    if not pool:
        return None
    pool.sort(key=lambda e: e.key(metric_higher_is_better))
    chosen, rejected = pool[0], pool[-1]
    if objective != "best" and (chosen.text == rejected.text or chosen.score == rejected.score):
        return None
    return PreferenceRecord(
        ranked.source,
        ranked.reference,
        ranked.reference_score,
        list(ranked.candidates),
        chosen.text,
        rejected.text,
        chosen.score,
        rejected.score,
        objective,
        metric_higher_is_better,
        ranked_by,
    )


def json_line(record: RankedSource | PreferenceRecord) -> str:
    """``record`` as one JSON line (its newline included); a non-finite score is refused,
    as JSON has no NaN."""
    return json.dumps(record.to_dict(), ensure_ascii=False, allow_nan=False) + "\n"


def ranked_source_of(line: str) -> RankedSource | None:
    """The ranked source one cache line holds, or None for a line that is torn or not
    one (any field missing or ill-typed, a candidate dropped included)."""
    notes: list[str] = []
    try:
        data = json.loads(line)
    except ValueError:
        return None
    ranked = decode(RankedSource, data, notes)
    return ranked if not notes else None


def write_preferences(path: Path, records: Iterable[PreferenceRecord]) -> None:
    """Write ``preferences.jsonl`` atomically: a reader sees every line or the old file."""
    write_text(path, "".join(json_line(record) for record in records))


def read_preferences(path: Path) -> list[PreferenceRecord]:
    """Every record of a ``preferences.jsonl``; a line that is not one is one line of
    error naming the file and the line (the file is written whole, so it was edited)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise WorkbenchError(f"cannot read the preferences {path}: {err}") from None
    records = []
    for number, line in enumerate(lines, 1):
        notes: list[str] = []
        try:
            record = decode(PreferenceRecord, json.loads(line), notes, f"line {number}")
        except ValueError:
            record = None
        if record is None or notes:
            raise WorkbenchError(
                f"{path} line {number} is not a preference record "
                f"({'; '.join(notes) or 'not JSON'}); write the file again with its run"
            )
        records.append(record)
    return records
