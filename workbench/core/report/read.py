"""The run report: one run folder read back into what a student hands in.

The assignment asks for loss and BLEU per epoch, BLEU before vs after, five samples,
translations tried in the console and an attention heatmap -- evidence scattered over
``config.json``, ``metrics.jsonl``, ``summary.json``, the console history and the model.
:func:`build_report` gathers it into one :class:`~.contents.RunReport` (plain data, figures
as SVG text); :mod:`.render` turns that into ``report.md`` and a self-contained
``report.html``; :func:`~.write.write_report` puts both in the run folder. The CLI (``workbench
report``) and the TUI call :func:`create_report`, which does all three.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from workbench.core.attention.figures import heatmap_svg
from workbench.core.attention.kept_heatmaps import heatmap_view
from workbench.core.data.dropped_pairs import read_dropped_pairs
from workbench.core.events import EvalDone
from workbench.core.lab.attention_kinds import AttentionKinds
from workbench.core.lab.decoding_strategies import DecodingStudy
from workbench.core.lab.kv_cache import CacheStudy
from workbench.core.lab.prompt_attention import PromptAttention
from workbench.core.live.liveness import run_liveness
from workbench.core.live.run_metrics import RunMetrics, read_run_metrics
from workbench.core.records.files import read_json_dict
from workbench.core.records.scores import finite_or_none
from workbench.core.records.summary import RunSummary
from workbench.core.records.typed import decode
from workbench.core.report.contents import (
    AttentionFigure,
    EpochRow,
    LabStudies,
    RunReport,
)
from workbench.core.report.screenshots import read_screenshots
from workbench.core.run_folder.layout import MODEL_CONFIG_FILE, OutputFolder, RunFolder
from workbench.core.run_folder.output_folder import latest_finished_run
from workbench.core.run_folder.saved_config import SavedConfig, preset_defaults, read_saved_config
from workbench.core.run_folder.summary_file import read_summary
from workbench.core.translate.console_lines import console_for_run
from workbench.core.translate.history import read_history
from workbench.core.views.live_text import output_dir_flag
from workbench.core.views.svg import Series, line_chart_svg
from workbench.errors import WorkbenchError

# --------------------------------------------------------------------------- finding the run


def resolve_run_dir(run_dir: str | Path | None, output_root: str | Path) -> Path:
    """The run folder to report on: the given one, or the newest finished run."""
    root = Path(output_root).expanduser()
    if run_dir is None:
        found = latest_finished_run(root)
        if found is None:
            where = OutputFolder(root).runs
            raise WorkbenchError(
                f"no finished run under {where}; train one first "
                "(workbench train --headless --preset demo) or give the run folder"
            )
        return found[0]
    path = Path(run_dir).expanduser()
    if not path.is_dir():
        raise WorkbenchError(
            f"run folder {path} does not exist; runs are listed under {OutputFolder(root).runs}"
        )
    if OutputFolder(path).runs.is_dir() and not RunFolder(path).summary.exists():
        return resolve_run_dir(None, path)  # the output folder itself: its newest run
    live = run_liveness(path)
    if live.writing:
        raise WorkbenchError(
            f"run {path.name} is {live.status} ({live.why()}); report on it once it has "
            f"finished (`workbench logs {path.name} --follow{output_dir_flag(root)}` shows "
            "it going)"
        )
    if not RunFolder(path).summary.is_file():
        raise WorkbenchError(
            f"{path} has no summary.json: the run is {live.status} and stopped before its "
            "first summary; report on a finished run (workbench report without a folder "
            "takes the newest one)"
        )
    return path


# --------------------------------------------------------------------------- reading the run


def _by_step(events: list[EvalDone]) -> list[EvalDone]:
    """One event per step, the last one written (a resumed run logs its steps again)."""
    kept = {event.step: event for event in events}
    return [kept[s] for s in sorted(kept)]


def epoch_rows(summary: RunSummary, metrics: RunMetrics) -> list[EpochRow]:
    """Per-epoch evaluations with the mean training loss of the steps since the last one.

    A finished run's summary holds the Trainer's evaluation log; a stopped run has only
    the ``EvalDone`` events in ``metrics.jsonl``, which carry the same numbers.
    """
    evals = [(e.epoch, e.step, e.eval_loss, e.eval_bleu, e.eval_chrf) for e in summary.epochs or []]
    if not evals:
        evals = [
            (e.epoch, e.step, e.loss, e.bleu, e.chrf)
            for e in _by_step(
                [e for e in metrics.events if isinstance(e, EvalDone) and e.stage == "epoch"]
            )
        ]
    steps = metrics.steps.last_per_step()  # in step order: each epoch's steps are a slice
    best_step = _checkpoint_step(summary.best_checkpoint)
    rows = []
    previous = -1
    for epoch, at, val_loss, bleu, chrf in evals:
        step = at if isinstance(at, int) else None
        first, end = (
            np.searchsorted(steps.step, [previous, step], "right") if step is not None else (0, 0)
        )
        since = steps.loss[first:end]
        losses = since[np.isfinite(since)].tolist()
        rows.append(
            EpochRow(
                epoch=finite_or_none(epoch) or 0.0,
                step=step,
                train_loss=sum(losses) / len(losses) if losses else None,
                val_loss=finite_or_none(val_loss),
                bleu=finite_or_none(bleu),
                chrf=finite_or_none(chrf),
                best=step is not None and step == best_step,
            )
        )
        previous = step if step is not None else previous
    return rows


def _checkpoint_step(path: Any) -> int | None:
    name = Path(str(path)).name if path else ""
    number = name.removeprefix("checkpoint-")
    return int(number) if number.isdigit() else None


def train_loss_points(metrics: RunMetrics) -> list[tuple[float, float]]:
    """(epoch, loss) of every logged training step with a finite epoch and loss."""
    steps = metrics.steps.last_per_step()
    finite = np.isfinite(steps.epoch) & np.isfinite(steps.loss)
    return list(zip(steps.epoch[finite].tolist(), steps.loss[finite].tolist(), strict=True))


# --------------------------------------------------------------------------- the heatmap


def attention_figure(run_dir: Path, sentence: str | None) -> AttentionFigure:
    """The sentence's attention under the run's best model, drawn: the view the run kept
    (:mod:`~workbench.core.attention.kept_heatmaps`), else one computed now.

    Only a view not kept loads torch and the model (a kept view that does not read is
    computed again). A run without a model, or a model that cannot be loaded, gives a
    figure that says why instead of failing the report.
    """
    if not sentence:
        return AttentionFigure(
            missing="there is no sentence to show: no console "
            "translation and no samples; pass --sentence"
        )
    model_dir = RunFolder(run_dir).best_model
    if not (model_dir / MODEL_CONFIG_FILE).is_file():
        return AttentionFigure(
            sentence=sentence,
            missing=(
                f"this run has no saved model in {model_dir} (it did not finish), so there "
                "is no attention to show"
            ),
        )
    try:
        view = heatmap_view(run_dir, model_dir, sentence)
    except Exception as err:  # a figure must never take the whole report down
        return AttentionFigure(
            sentence=sentence,
            missing=(f"the attention could not be computed ({type(err).__name__}: {err})"),
        )
    title = view.heading[:1].upper() + view.heading[1:]
    return AttentionFigure(
        sentence=view.sentence,
        translation=view.translation,
        view=view.view,
        svg=heatmap_svg(view.rows, view.cols, view.matrix, title=title),
        kind=view.kind,
    )


# --------------------------------------------------------------------------- building it


def build_report(
    run_dir: Path,
    sentence: str | None = None,
    output_root: Path | None = None,
    with_attention: bool = True,
    console_choice: str = "auto",
) -> RunReport:
    """Read a run folder, its console history and its model into a :class:`RunReport`;
    ``console_choice`` (:data:`CONSOLE_CHOICES`) says which console lines it lists."""
    run_dir = Path(run_dir)
    folder = RunFolder(run_dir)
    summary = read_summary(run_dir)
    if summary is None:
        raise WorkbenchError(f"{folder.summary} is missing or unreadable; report on a finished run")
    root = Path(output_root) if output_root is not None else folder.output_root
    saved = read_saved_config(run_dir) or SavedConfig({})
    metrics = read_run_metrics(folder.metrics)
    console, console_note = console_for_run(
        read_history(OutputFolder(root).history), run_dir, summary, root, console_choice
    )
    samples = summary.samples or []
    chosen = (
        sentence
        or next((c.source for c in console if c.role == "fine-tuned"), None)
        or (samples[0].source if samples else None)
    )
    attention = (
        attention_figure(run_dir, chosen)
        if with_attention
        else AttentionFigure(sentence=chosen or "", missing="not requested")
    )
    report = RunReport(
        run_dir=run_dir,
        saved=saved,
        preset_defaults=preset_defaults(saved),
        summary=summary,
        epochs=epoch_rows(summary, metrics),
        train_loss=train_loss_points(metrics),
        console=console,
        console_note=console_note,
        attention=attention,
        generated=time.strftime("%Y-%m-%d %H:%M"),
        dropped=read_dropped_pairs(run_dir),
        screenshots=read_screenshots(run_dir),
    )
    if report.status != "finished":
        report.notes.append(
            f"This run is {report.status}, not finished"
            + (f" ({summary.error})" if summary.error else "")
            + ": BLEU after fine-tuning, the samples and the model are missing; resume it "
            "with `workbench train --resume` and report again."
        )
    report.lab = read_lab_studies(run_dir)
    report.figures = draw_report_figures(report)
    return report


def read_lab_studies(run_dir: Path, notes: list[str] | None = None) -> LabStudies:
    """Every Lab study saved in the run folder (``workbench lab ...``), read back typed
    through the one decoder; a file that does not read as its study is named in
    ``unreadable`` and left out, and ``notes`` says why (values a study derives, such as
    a speed-up, are not read back)."""
    said = notes if notes is not None else []
    studies: dict[str, Any] = {}
    unreadable: list[str] = []
    for key, study in (
        ("decoding", DecodingStudy),
        ("cache", CacheStudy),
        ("attention", AttentionKinds),
        ("prompt_attention", PromptAttention),
    ):
        path = RunFolder(run_dir).lab_study(key)
        if not path.exists():
            continue
        record = read_json_dict(path)
        read = decode(study, record, said, path.name) if record is not None else None
        if read is None:
            unreadable.append(path.name)
            said.append(f"{path.name}: not read as a {study.__name__}; the study is left out")
        else:
            studies[key] = read
    return LabStudies(**studies, unreadable=tuple(unreadable))


def draw_report_figures(report: RunReport) -> dict[str, str]:
    """The loss and BLEU curves and (when there is one) the attention heatmap, as SVG."""
    epochs = report.epochs
    figures = {
        "loss": line_chart_svg(
            [
                Series("training loss (per logging step)", report.train_loss),
                Series(
                    "validation loss (per epoch)",
                    [(r.epoch, r.val_loss) for r in epochs if r.val_loss is not None],
                    dashed=True,
                ),
            ],
            title="Loss",
            x_label="epoch",
            y_label="loss",
        ),
        "bleu": line_chart_svg(
            [
                Series("BLEU", [(r.epoch, r.bleu) for r in epochs if r.bleu is not None]),
                Series(
                    "chrF", [(r.epoch, r.chrf) for r in epochs if r.chrf is not None], dashed=True
                ),
            ],
            title="Validation BLEU and chrF per epoch",
            x_label="epoch",
            y_label="score",
        ),
    }
    if report.attention.svg:
        figures["attention"] = report.attention.svg
    return figures
