"""The run report: one run folder read back into what a student hands in.

The assignment asks for loss and BLEU per epoch, BLEU before vs after, five samples,
translations tried in the console and an attention heatmap -- evidence scattered over
``config.json``, ``metrics.jsonl``, ``summary.json``, the console history and the model.
:func:`build_report` gathers it into one :class:`RunReport` (plain data, figures as SVG
text); :mod:`workbench.core.report_render` turns that into ``report.md`` and a
self-contained ``report.html``; :func:`write_report` puts both in the run folder. The
CLI (``workbench report``) and the TUI call the same two functions.

Console history lines name the model folder they used, and the TUI and the console use
the *published* ``translation_output/best_model``, which every finished run replaces. So
a line made with it belongs to this run when it was written after this run published its
model and before the next finished run did.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.atomic import write_text
from workbench.core.config import DEFAULT_OUTPUT_DIR, build_config
from workbench.core.events import finite_or_none
from workbench.core.heatmap import heatmap_svg
from workbench.core.runs import (
    BEST_MODEL,
    HISTORY_FILE,
    INITIAL_MODEL,
    RUNS_FOLDER,
    RunSummary,
    is_finished,
    latest_finished_run,
    read_json_dict,
    read_summary,
    run_folders,
)
from workbench.core.svg import Series, line_chart_svg
from workbench.errors import WorkbenchError

REPORT_MD = "report.md"
REPORT_HTML = "report.html"
#: Figure files written next to report.md (the HTML inlines the same SVG text).
FIGURE_FILES = {"loss": "report_loss.svg", "bleu": "report_bleu.svg",
                "attention": "report_attention.svg"}
#: More console lines than this and the report lists the newest ones (and says so).
MAX_CONSOLE_LINES = 100


@dataclass(frozen=True)
class EpochRow:
    """One evaluation during training: losses, BLEU and chrF at the end of an epoch."""

    epoch: float
    step: int | None
    train_loss: float | None
    val_loss: float | None
    bleu: float | None
    chrf: float | None
    best: bool = False


@dataclass(frozen=True)
class ConsoleLine:
    """One translation typed into the console or the TUI."""

    time: str
    model: str
    role: str  # "fine-tuned", "base", or "" when it could not be matched to this run
    source: str
    translation: str


@dataclass
class AttentionFigure:
    """The heatmap of one sentence, or why there is none."""

    sentence: str = ""
    translation: str = ""
    view: str = ""
    svg: str | None = None
    missing: str = ""


@dataclass
class RunReport:
    """Everything the report shows, read from one run folder."""

    run_dir: Path
    settings: dict[str, Any]
    preset_defaults: dict[str, Any]
    summary: RunSummary
    epochs: list[EpochRow]
    train_loss: list[tuple[float, float]]  # (epoch, loss) per logging step
    console: list[ConsoleLine]
    console_note: str
    attention: AttentionFigure
    notes: list[str] = field(default_factory=list)
    figures: dict[str, str] = field(default_factory=dict)  # key of FIGURE_FILES -> SVG
    generated: str = ""

    @property
    def name(self) -> str:
        """The run folder's name (its start time and preset)."""
        return self.run_dir.name

    @property
    def status(self) -> str:
        """``finished``, ``stopped`` or ``failed``, as the summary says."""
        return self.summary.status or "unknown"


# --------------------------------------------------------------------------- finding the run


def output_root_of(run_dir: Path) -> Path:
    """The output folder a run folder lives in (``<root>/runs/<name>``), else its parent."""
    return run_dir.parent.parent if run_dir.parent.name == RUNS_FOLDER else run_dir.parent


def resolve_run_dir(run_dir: str | Path | None, output_root: str | Path) -> Path:
    """The run folder to report on: the given one, or the newest finished run."""
    root = Path(output_root).expanduser()
    if run_dir is None:
        found = latest_finished_run(root)
        if found is None:
            where = root / RUNS_FOLDER
            raise WorkbenchError(
                f"no finished run under {where}; train one first "
                "(workbench train --headless --preset demo) or give the run folder"
            )
        return found[0]
    path = Path(run_dir).expanduser()
    if not path.is_dir():
        raise WorkbenchError(f"run folder {path} does not exist; runs are listed under "
                             f"{root / RUNS_FOLDER}")
    if (path / RUNS_FOLDER).is_dir() and not (path / "summary.json").exists():
        return resolve_run_dir(None, path)  # the output folder itself: its newest run
    if not (path / "summary.json").is_file():
        raise WorkbenchError(
            f"{path} has no summary.json: the run is still going or stopped before its "
            "first summary; report on a finished run (workbench report without a folder "
            "takes the newest one)"
        )
    return path


# --------------------------------------------------------------------------- reading files


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file; unreadable lines (a killed writer) are skipped."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def _by_step(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per step, the last one written (a resumed run logs its steps again)."""
    kept: dict[int, dict[str, Any]] = {}
    for record in records:
        step = record.get("step")
        if isinstance(step, int):
            kept[step] = record
    return [kept[s] for s in sorted(kept)]


def epoch_rows(summary: RunSummary, events: list[dict[str, Any]]) -> list[EpochRow]:
    """Per-epoch evaluations with the mean training loss of the steps since the last one.

    A finished run's summary holds the Trainer's evaluation log; a stopped run has only
    the ``EvalDone`` events in ``metrics.jsonl``, which carry the same numbers.
    """
    evals = [
        {"epoch": e.get("epoch"), "step": e.get("step"), "loss": e.get("eval_loss"),
         "bleu": e.get("eval_bleu"), "chrf": e.get("eval_chrf")}
        for e in summary.epochs or []
    ]
    if not evals:
        evals = _by_step([e for e in events
                          if e.get("event") == "EvalDone" and e.get("stage") == "epoch"])
    steps = _by_step([e for e in events if e.get("event") == "TrainStep"])
    best_step = _checkpoint_step(summary.best_checkpoint)
    rows = []
    previous = -1
    for e in evals:
        step = e.get("step") if isinstance(e.get("step"), int) else None
        losses = [finite_or_none(s.get("loss")) for s in steps
                  if step is not None and previous < s["step"] <= step]
        losses = [x for x in losses if x is not None]
        rows.append(EpochRow(
            epoch=finite_or_none(e.get("epoch")) or 0.0,
            step=step,
            train_loss=sum(losses) / len(losses) if losses else None,
            val_loss=finite_or_none(e.get("loss")),
            bleu=finite_or_none(e.get("bleu")),
            chrf=finite_or_none(e.get("chrf")),
            best=step is not None and step == best_step,
        ))
        previous = step if step is not None else previous
    return rows


def _checkpoint_step(path: Any) -> int | None:
    name = Path(str(path)).name if path else ""
    number = name.removeprefix("checkpoint-")
    return int(number) if number.isdigit() else None


def train_loss_points(events: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """(epoch, loss) of every logged training step with a finite loss."""
    points = []
    for e in _by_step([e for e in events if e.get("event") == "TrainStep"]):
        epoch, loss = finite_or_none(e.get("epoch")), finite_or_none(e.get("loss"))
        if epoch is not None and loss is not None:
            points.append((epoch, loss))
    return points


def finish_time(run_dir: Path, events: list[dict[str, Any]] | None = None) -> float | None:
    """When the run finished (and published its model), as a Unix time."""
    if events is None:
        events = read_jsonl(run_dir / "metrics.jsonl")
    for e in reversed(events):
        if e.get("event") == "RunDone" and e.get("status") == "finished":
            return finite_or_none(e.get("time"))
    try:
        return (run_dir / "summary.json").stat().st_mtime
    except OSError:
        return None


# --------------------------------------------------------------------------- console history


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
    return len(mine) >= 2 and len(theirs) >= len(mine) and theirs[-len(mine):] == mine


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
    history: list[dict[str, Any]], run_dir: Path, summary: RunSummary, output_root: Path,
    events: list[dict[str, Any]] | None = None,
) -> tuple[list[ConsoleLine], str]:
    """The history lines made with this run's models, and a sentence saying which.

    This run's own folders (``best_model``, ``initial_model``) match at any time; the
    published model and a Hub base model only between this run's finish and the next
    finished run's. When nothing matches, every line is listed and the note says so.
    """
    own = {"fine-tuned": [run_dir / BEST_MODEL, summary.run_best_model],
           "base": [run_dir / INITIAL_MODEL]}
    shared = {"fine-tuned": [output_root / BEST_MODEL, summary.best_model],
              "base": [summary.base_model]}
    start = finish_time(run_dir, events)
    end = _next_publish(run_dir, output_root)
    matched: list[ConsoleLine] = []
    for record in history:
        model = str(record.get("model", ""))
        moment = _local_time(record.get("time"))
        in_window = (moment is not None and start is not None and moment >= start - 1
                     and (end is None or moment < end))
        role = ""
        if record.get("run_dir"):  # newer history lines name their run: match exactly
            if same_folder(str(record["run_dir"]), run_dir):
                role = "base" if Path(model).name == INITIAL_MODEL else "fine-tuned"
                matched.append(_console_line(record, role))
            continue
        for name in ("fine-tuned", "base"):
            if any(same_folder(model, f) for f in own[name] if f) or (
                    in_window and any(same_folder(model, f) for f in shared[name] if f)):
                role = name
                break
        if role:
            matched.append(_console_line(record, role))
    where = output_root / HISTORY_FILE
    total = len(history)
    if not total:
        return [], (f"No console translations yet ({where} is empty or missing): try some "
                    "with `workbench interact` or the TUI's Translate pane, then report again.")
    if matched:
        note = (f"{len(matched)} of the {total} lines in {where} were translated with this "
                "run's models; the others used other models and are left out.")
        if len(matched) == total:
            note = f"All {total} lines in {where} were translated with this run's models."
        lines = matched
    else:
        note = (f"None of the {total} lines in {where} could be matched to this run's "
                "models (they name other model folders, or were made before this run "
                "finished), so all are listed with the model each one used.")
        lines = [_console_line(record, "") for record in history]
    if len(lines) > MAX_CONSOLE_LINES:
        note += f" The newest {MAX_CONSOLE_LINES} of {len(lines)} are shown."
        lines = lines[-MAX_CONSOLE_LINES:]
    return lines, note


def _console_line(record: dict[str, Any], role: str) -> ConsoleLine:
    return ConsoleLine(time=str(record.get("time", "")), model=str(record.get("model", "")),
                       role=role, source=str(record.get("source", "")),
                       translation=str(record.get("translation", "")))


# --------------------------------------------------------------------------- the heatmap


def attention_figure(run_dir: Path, sentence: str | None) -> AttentionFigure:
    """Translate the sentence with the run's best model and draw its cross-attention.

    Loads torch and the model only here. A run without a model, or a model that cannot
    be loaded, gives a figure that says why instead of failing the whole report.
    """
    if not sentence:
        return AttentionFigure(missing="there is no sentence to show: no console "
                                       "translation and no samples; pass --sentence")
    model_dir = run_dir / BEST_MODEL
    if not (model_dir / "config.json").is_file():
        return AttentionFigure(sentence=sentence, missing=(
            f"this run has no saved model in {model_dir} (it did not finish), so there "
            "is no attention to show"))
    try:
        from workbench.core.attention import load_attention_model

        amap = load_attention_model(str(model_dir)).map(sentence)
        view = amap.view(words=True)
    except Exception as err:  # a figure must never take the whole report down
        return AttentionFigure(sentence=sentence, missing=(
            f"the attention could not be computed ({type(err).__name__}: {err})"))
    title = f"Cross-attention · {view.title}"
    svg = heatmap_svg(view.row_labels, view.col_labels, view.matrix.tolist(), title=title)
    return AttentionFigure(sentence=amap.sentence, translation=amap.translation,
                           view=view.title, svg=svg)


# --------------------------------------------------------------------------- building it


def _preset_defaults(settings: dict[str, Any]) -> dict[str, Any]:
    try:  # an unknown or missing preset: no defaults to compare with
        return build_config(str(settings.get("preset"))).to_dict()
    except WorkbenchError:
        return {}


def build_report(
    run_dir: Path,
    sentence: str | None = None,
    output_root: Path | None = None,
    with_attention: bool = True,
) -> RunReport:
    """Read a run folder, its console history and its model into a :class:`RunReport`."""
    run_dir = Path(run_dir)
    summary = read_summary(run_dir)
    if summary is None:
        raise WorkbenchError(f"{run_dir / 'summary.json'} is missing or unreadable; "
                             "report on a finished run")
    root = Path(output_root) if output_root is not None else output_root_of(run_dir)
    settings = read_json_dict(run_dir / "config.json") or {}
    settings.pop("precision", None)  # recorded by the run, shown from the summary
    events = read_jsonl(run_dir / "metrics.jsonl")
    console, console_note = console_for_run(read_jsonl(root / HISTORY_FILE), run_dir,
                                            summary, root, events)
    samples = summary.samples or []
    chosen = sentence or next((c.source for c in console if c.role == "fine-tuned"), None) \
        or (samples[0].get("source") if samples else None)
    attention = (attention_figure(run_dir, chosen) if with_attention
                 else AttentionFigure(sentence=chosen or "", missing="not requested"))
    report = RunReport(
        run_dir=run_dir,
        settings=settings,
        preset_defaults=_preset_defaults(settings),
        summary=summary,
        epochs=epoch_rows(summary, events),
        train_loss=train_loss_points(events),
        console=console,
        console_note=console_note,
        attention=attention,
        generated=time.strftime("%Y-%m-%d %H:%M"),
    )
    if report.status != "finished":
        report.notes.append(
            f"This run is {report.status}, not finished"
            + (f" ({summary.error})" if summary.error else "")
            + ": BLEU after fine-tuning, the samples and the model are missing; resume it "
              "with `workbench train --resume` and report again.")
    report.figures = draw_figures(report)
    return report


def draw_figures(report: RunReport) -> dict[str, str]:
    """The loss and BLEU curves and (when there is one) the attention heatmap, as SVG."""
    epochs = report.epochs
    figures = {
        "loss": line_chart_svg(
            [Series("training loss (per logging step)", report.train_loss),
             Series("validation loss (per epoch)",
                    [(r.epoch, r.val_loss) for r in epochs if r.val_loss is not None],
                    dashed=True)],
            title="Loss", x_label="epoch", y_label="loss"),
        "bleu": line_chart_svg(
            [Series("BLEU", [(r.epoch, r.bleu) for r in epochs if r.bleu is not None]),
             Series("chrF", [(r.epoch, r.chrf) for r in epochs if r.chrf is not None],
                    dashed=True)],
            title="Validation BLEU and chrF per epoch", x_label="epoch", y_label="score"),
    }
    if report.attention.svg:
        figures["attention"] = report.attention.svg
    return figures


def write_report(report: RunReport) -> list[Path]:
    """Write report.md, report.html and the SVG figures into the run folder."""
    from workbench.core.report_render import render_html, render_markdown

    files = {FIGURE_FILES[key]: svg for key, svg in report.figures.items()}
    files[REPORT_MD] = render_markdown(report)
    files[REPORT_HTML] = render_html(report)
    written = []
    stale = set(FIGURE_FILES.values()) - set(files)  # e.g. an old heatmap now absent
    try:
        for name in stale:
            (report.run_dir / name).unlink(missing_ok=True)
        for name, text in files.items():
            path = report.run_dir / name
            write_text(path, text)
            written.append(path)
    except OSError as err:
        raise WorkbenchError(f"cannot write the report into {report.run_dir}: "
                             f"{err.strerror or err}") from None
    return written


def create_report(
    run_dir: str | Path | None, output_root: str | Path | None = None,
    sentence: str | None = None,
) -> tuple[RunReport, list[Path]]:
    """Find the run (default: the newest finished one), build its report and write it.

    ``output_root`` is where runs and the console history live; by default the run
    folder's own output folder, or ``translation_output`` when no run folder is given.
    """
    root = Path(output_root).expanduser() if output_root is not None else None
    run = resolve_run_dir(run_dir, root if root is not None else DEFAULT_OUTPUT_DIR)
    report = build_report(run, sentence=sentence,
                          output_root=root if root is not None else output_root_of(run))
    return report, write_report(report)
