"""The console history: every translation tried in ``interact`` or the TUI, one JSON line each.

Appended as it happens, so a crash or a closed SSH session never loses what the user
tried; the run report reads it back and matches each line to the run whose model made it.

Lines name the model folder they used, and the TUI and the console use the *published*
``translation_output/best_model``, which every finished run replaces. So a line made with
it belongs to a run when it was written after that run published its model and before the
next finished run did. Newer lines also name their run, and match it exactly.

A judgement (:mod:`.judgements`) is appended as a record of its own that names the line it
judges by its ``id``; the reader folds it into that line. The file is only ever appended
to, so no judgement can cost a line, whichever front end writes at the same time.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.live.liveness import finish_time
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.layout import OutputFolder, RunFolder
from workbench.core.run_folder.output_folder import run_folders
from workbench.core.run_folder.summary_file import is_finished
from workbench.core.translate.judgements import JUDGE_USAGE, Judgement
from workbench.core.translate.quality import QualityScore

if TYPE_CHECKING:
    from workbench.core.translate.translator import Translation, Translator


def _append(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8", errors="replace") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        fh.flush()


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
    line_id = uuid.uuid4().hex[:12]
    record: dict[str, Any] = {
        "id": line_id,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "model": model,
        "run_dir": translator.run_dir if translator else None,
        "backend": translator.backend.name if translator else "",
        "source": item.source,
        "translation": item.text,
        "seconds": round(item.seconds, 3),
        "notices": item.notices,
    }
    if quality is not None:  # a reference-free score (interact --qe, tui --qe)
        record["qe"] = quality.to_record()
    _append(path, record)
    return line_id


def append_judgement(path: Path, line_id: str, judgement: Judgement) -> None:
    """Record a judgement of the history line ``line_id`` (a later one replaces it)."""
    _append(
        path,
        {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "judges": line_id,
            "verdict": judgement.verdict,
            "note": judgement.note,
        },
    )


def fold_judgements(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The translation records, each with its newest judgement (``verdict``, ``note``)."""
    lines = [dict(r) for r in records if "judges" not in r]
    by_id = {str(r["id"]): r for r in lines if r.get("id")}
    for record in records:
        line = by_id.get(str(record.get("judges")))
        if line is not None:
            line["verdict"] = str(record.get("verdict", ""))
            line["note"] = str(record.get("note", ""))
    return lines


#: More console lines than this and the report lists the newest ones (and says so).
MAX_CONSOLE_LINES = 100


@dataclass(frozen=True)
class ConsoleLine:
    """One translation typed into the console or the TUI."""

    time: str
    model: str
    role: str  # "fine-tuned", "base", or "" when it could not be matched to this run
    source: str
    translation: str
    judgement: str = ""  # the verdict and note in words (Judgement.text), or ""
    count: int = 1  # how often the same line was translated with the same model
    quality: str = ""  # a reference-free score in words (QualityScore.text), or ""


def _parts(path: str | Path) -> tuple[str, ...]:
    return Path(os.path.normpath(str(path))).parts


def same_folder(recorded: str, folder: str | Path) -> bool:
    """Whether a model path written in the history names ``folder``.

    History paths are as the user typed them (often relative to where they ran the
    command, which the report does not know), so a relative path matches when it is the
    tail of the folder's absolute path and at least two parts long (``x/best_model``).
    """
    if not recorded or not folder:
        return False
    if Path(recorded).is_absolute() and Path(folder).is_absolute():
        return Path(recorded).resolve() == Path(folder).resolve()
    mine = _parts(recorded)
    theirs = _parts(Path(folder).resolve()) if Path(folder).exists() else _parts(folder)
    if mine == _parts(folder):
        return True
    return len(mine) >= 2 and len(theirs) >= len(mine) and theirs[-len(mine) :] == mine


def _local_time(text: Any) -> float | None:
    try:
        return time.mktime(time.strptime(str(text), "%Y-%m-%dT%H:%M:%S"))
    except (ValueError, OverflowError):
        return None


def _next_publish(run_dir: Path, output_root: Path) -> float | None:
    """When the next finished run after this one replaced the published model."""
    later = [r for r in run_folders(output_root) if r.name > run_dir.name and is_finished(r)]
    times = [t for t in map(finish_time, later) if t is not None]
    return min(times) if times else None


def console_for_run(
    history: list[dict[str, Any]],
    run_dir: Path,
    summary: RunSummary,
    output_root: Path,
    choice: str = "auto",
) -> tuple[list[ConsoleLine], str]:
    """The history lines made with this run's models, and a sentence saying which.

    This run's own folders (``best_model``, ``initial_model``) match at any time; the
    published model and a Hub base model only between this run's finish and the next
    finished run's. When nothing matches, every line is listed and the note says so.
    Then :func:`choose_lines` keeps the judged ones or all (``choice``), each once.
    """
    history = fold_judgements(history)
    own: dict[str, list[Path | str | None]] = {
        "fine-tuned": [RunFolder(run_dir).best_model, summary.run_best_model],
        "base": [RunFolder(run_dir).initial_model],
    }
    shared: dict[str, list[Path | str | None]] = {
        "fine-tuned": [OutputFolder(output_root).best_model, summary.best_model],
        "base": [summary.base_model],
    }
    start = finish_time(run_dir)
    end = _next_publish(run_dir, output_root)
    matched: list[ConsoleLine] = []
    for record in history:
        model = str(record.get("model", ""))
        moment = _local_time(record.get("time"))
        in_window = (
            moment is not None
            and start is not None
            and moment >= start - 1
            and (end is None or moment < end)
        )
        role = ""
        if record.get("run_dir"):  # newer history lines name their run: match exactly
            if same_folder(str(record["run_dir"]), run_dir):
                initial = RunFolder(run_dir).initial_model.name
                role = "base" if Path(model).name == initial else "fine-tuned"
                matched.append(_console_line(record, role))
            continue
        for name in ("fine-tuned", "base"):
            if any(same_folder(model, f) for f in own[name] if f) or (
                in_window and any(same_folder(model, f) for f in shared[name] if f)
            ):
                role = name
                break
        if role:
            matched.append(_console_line(record, role))
    where = OutputFolder(output_root).history
    total = len(history)
    if not total:
        return [], (
            f"No console translations yet ({where} is empty or missing): try some "
            "with `workbench interact` or the TUI's Translate pane, then report again."
        )
    if matched:
        note = (
            f"{len(matched)} of the {total} lines in {where} were translated with this "
            "run's models; the others used other models and are left out."
        )
        if len(matched) == total:
            note = f"All {total} lines in {where} were translated with this run's models."
        lines = matched
    else:
        note = (
            f"None of the {total} lines in {where} could be matched to this run's "
            "models (they name other model folders, or were made before this run "
            "finished), so all are listed with the model each one used."
        )
        lines = [_console_line(record, "") for record in history]
    lines, chosen = choose_lines(lines, choice)
    note += f" {chosen}"
    if len(lines) > MAX_CONSOLE_LINES:
        note += f" The newest {MAX_CONSOLE_LINES} of {len(lines)} are shown."
        lines = lines[-MAX_CONSOLE_LINES:]
    return lines, note


def choose_lines(lines: list[ConsoleLine], choice: str = "auto") -> tuple[list[ConsoleLine], str]:
    """Each distinct line once (newest time, newest judgement, how often), the judged ones
    only for ``judged`` (and for ``auto`` when any is judged), and a sentence saying so."""
    groups: dict[tuple[str, str, str, str], ConsoleLine] = {}
    for line in lines:
        key = (line.role, line.model if not line.role else "", line.source, line.translation)
        seen = groups.pop(key, None)  # re-inserted: the groups stay in order of last use
        count = seen.count + 1 if seen else 1
        judgement = line.judgement or (seen.judgement if seen else "")
        quality = line.quality or (seen.quality if seen else "")
        groups[key] = replace(line, count=count, judgement=judgement, quality=quality)
    distinct = list(groups.values())
    judged = [line for line in distinct if line.judgement]
    repeated = len(lines) - len(distinct)
    plural = "s" if repeated != 1 else ""
    twice = f" ({repeated} repeated line{plural} shown once)" if repeated else ""
    if choice == "judged" or (choice == "auto" and judged):
        if not judged:
            return [], (
                "None of them is judged yet: judge translations with "
                f"`{JUDGE_USAGE}` in `workbench interact` or the TUI's Translate pane, "
                "or report with `--console all`."
            )
        return judged, (
            f"Listed: the {len(judged)} judged of {len(distinct)} distinct lines{twice}; "
            "`--console all` lists all."
        )
    return distinct, f"Listed: all {len(distinct)} distinct lines{twice}."


def _console_line(record: dict[str, Any], role: str) -> ConsoleLine:
    verdict = str(record.get("verdict") or "")
    quality = QualityScore.from_record(record.get("qe"))
    return ConsoleLine(
        time=str(record.get("time", "")),
        model=str(record.get("model", "")),
        role=role,
        source=str(record.get("source", "")),
        translation=str(record.get("translation", "")),
        judgement=Judgement(verdict, str(record.get("note") or "")).text() if verdict else "",
        quality=quality.text() if quality is not None else "",
    )
