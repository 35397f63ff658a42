"""The console history: every translation tried in ``interact`` or the TUI, one JSON line each.

Appended as it happens, so a crash or a closed SSH session never loses what the user
tried; the run report reads it back (:mod:`.console_lines` matches each line to the run
whose model made it). A line names the model it used as the user named it, and the run
that trained it when the model knows (its workbench.json's ``run_dir``).

A judgement (:mod:`.judgements`) is appended as a record of its own that names the line it
judges by its ``id``; the reader folds it into that line. The file is only ever appended
to, so no judgement can cost a line, whichever front end writes at the same time. Both
records are read back through their dataclasses (:func:`read_history`), as every other
record a run or a console writes.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.records.files import read_jsonl
from workbench.core.records.typed import decode
from workbench.core.translate.judgements import Judgement
from workbench.core.translate.quality import QualityScore

if TYPE_CHECKING:
    from workbench.core.translate.translator import Translation, Translator


@dataclass(frozen=True)
class HistoryLine:
    """One translation as the history file keeps it, and its newest judgement.

    Every field has a default, so a line the file holds is read whatever it lacks (a line
    written before its record had ``run_dir``, ``backend`` or ``qe``, or one a user
    edited): a field that is missing or ill-typed is read as its default, never the line
    dropped. ``judgement`` is not a field of the line on disk: a judgement is a record of
    its own (:class:`HistoryJudgement`), folded in when the file is read.
    """

    id: str = ""
    time: str = ""
    model: str = ""  # the model folder or Hub id as the user named it
    run_dir: str | None = None  # the run that trained the model (its workbench.json)
    backend: str = ""
    source: str = ""
    translation: str = ""
    seconds: float = 0.0
    notices: list[str] = field(default_factory=list)
    qe: QualityScore | None = None  # a reference-free score (interact --qe, tui --qe)
    judgement: Judgement | None = None

    def to_dict(self) -> dict[str, Any]:
        """The line as the file holds it: no ``judgement``, no ``qe`` when unscored."""
        record = dataclasses.asdict(self)
        del record["judgement"]
        if self.qe is None:
            del record["qe"]
        return record


@dataclass(frozen=True)
class HistoryJudgement:
    """A judgement as the history file keeps it: the ``id`` of the line it judges."""

    time: str = ""
    judges: str = ""
    verdict: str = ""
    note: str = ""


def _append(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8", errors="replace") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        fh.flush()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def append_history(
    path: Path,
    model: str,
    item: Translation,
    translator: Translator | None = None,
    quality: QualityScore | None = None,
) -> str:
    """Append one translation to the JSONL history (created on first use); its id.

    The record names the run that trained the model as well as the model folder:
    ``best_model/`` is replaced by every newer run, and the run report must know which
    run a line really belongs to. A judgement names the line by the id returned.
    """
    line = HistoryLine(
        id=uuid.uuid4().hex[:12],
        time=_now(),
        model=model,
        run_dir=translator.run_dir if translator else None,
        backend=translator.backend.name if translator else "",
        source=item.source,
        translation=item.text,
        seconds=round(item.seconds, 3),
        notices=list(item.notices),
        qe=quality,
    )
    _append(path, line.to_dict())
    return line.id


def append_judgement(path: Path, line_id: str, judgement: Judgement) -> None:
    """Record a judgement of the history line ``line_id`` (a later one replaces it)."""
    record = HistoryJudgement(_now(), line_id, judgement.verdict, judgement.note)
    _append(path, dataclasses.asdict(record))


def history_lines(records: Iterable[object]) -> list[HistoryLine]:
    """The translations among a history file's JSON records, each with its newest
    judgement folded in; a record that is no JSON object is skipped."""
    lines: list[HistoryLine] = []
    judgements: list[HistoryJudgement] = []
    for record in records:
        if isinstance(record, Mapping) and "judges" in record:
            judged = decode(HistoryJudgement, record)
            if judged is not None:
                judgements.append(judged)
            continue
        line = decode(HistoryLine, record)
        if line is not None:
            lines.append(line)
    at = {line.id: i for i, line in enumerate(lines) if line.id}
    for judged in judgements:  # in file order: the newest judgement of a line wins
        if judged.judges in at and judged.verdict:
            i = at[judged.judges]
            lines[i] = replace(lines[i], judgement=Judgement(judged.verdict, judged.note))
    return lines


def read_history(path: Path) -> list[HistoryLine]:
    """The console history at ``path`` (none when it is missing), read line by line; a
    torn last line of a killed writer is skipped."""
    return history_lines(read_jsonl(path))
