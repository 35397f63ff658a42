"""The console lines of one run: the history lines its models made, as its report lists them.

The console history (:mod:`.history`) names the model folder each line used, and the TUI
and the console use the *published* ``translation_output/best_model``, which every
finished run replaces. So a line made with it belongs to a run when it was written after
that run published its model and before the next finished run did. A line that names its
run (a model's workbench.json knows it) matches that run exactly.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

from workbench.core.live.liveness import finish_time
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.layout import OutputFolder, RunFolder
from workbench.core.run_folder.output_folder import run_folders
from workbench.core.run_folder.summary_file import is_finished
from workbench.core.translate.history import HistoryLine
from workbench.core.translate.judgements import JUDGE_USAGE

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


def _local_time(text: str) -> float | None:
    try:
        return time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))
    except (ValueError, OverflowError):
        return None


def _next_publish(run_dir: Path, output_root: Path) -> float | None:
    """When the next finished run after this one replaced the published model."""
    later = [r for r in run_folders(output_root) if r.name > run_dir.name and is_finished(r)]
    times = [t for t in map(finish_time, later) if t is not None]
    return min(times) if times else None


def console_for_run(
    history: list[HistoryLine],
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
    for line in history:
        moment = _local_time(line.time)
        in_window = (
            moment is not None
            and start is not None
            and moment >= start - 1
            and (end is None or moment < end)
        )
        role = ""
        if line.run_dir:  # lines that name their run match it exactly
            if same_folder(line.run_dir, run_dir):
                initial = RunFolder(run_dir).initial_model.name
                role = "base" if Path(line.model).name == initial else "fine-tuned"
                matched.append(_console_line(line, role))
            continue
        for name in ("fine-tuned", "base"):
            if any(same_folder(line.model, f) for f in own[name] if f) or (
                in_window and any(same_folder(line.model, f) for f in shared[name] if f)
            ):
                role = name
                break
        if role:
            matched.append(_console_line(line, role))
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
        lines = [_console_line(line, "") for line in history]
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


def _console_line(line: HistoryLine, role: str) -> ConsoleLine:
    return ConsoleLine(
        time=line.time,
        model=line.model,
        role=role,
        source=line.source,
        translation=line.translation,
        judgement=line.judgement.text() if line.judgement is not None else "",
        quality=line.qe.text() if line.qe is not None else "",
    )
