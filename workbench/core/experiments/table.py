"""Runs side by side: every run folder of an output folder read back into one table.

Nobody fine-tunes once. ``workbench runs`` lists each run with what it changed from its
preset and what it scored, so two recipes are compared on the numbers the runs wrote
(with their intervals) instead of from memory. Stopped and failed runs are listed too,
with their status: a run that died says so rather than disappearing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.config.settings import setting_value
from workbench.core.events import TrainStep, events_from_end
from workbench.core.live.liveness import run_liveness
from workbench.core.records.files import Stamp, file_stamp
from workbench.core.records.scores import SetScores
from workbench.core.records.status import LIVE_STATUSES
from workbench.core.records.summary import RunSummary, best_epoch
from workbench.core.run_folder.layout import RunFolder
from workbench.core.run_folder.output_folder import run_folders
from workbench.core.run_folder.saved_config import SavedConfig, preset_defaults, read_saved_config
from workbench.core.views.human_agreement import agreement_brief
from workbench.core.views.numbers import MISSING, format_seconds
from workbench.core.views.ranked_text import objective_brief, ranked_verdict
from workbench.core.views.score_text import with_ci
from workbench.core.views.verdict import marked

#: Settings that differ between runs without being a choice of recipe.
NOT_A_CHOICE = ("output_dir", "data_revision", "precision", "preset")


@dataclass
class RunRow:
    """One run: who it is, what it changed, how it trained and what it scored."""

    run_id: str
    run_dir: str
    preset: str
    status: str
    changed: dict[str, Any] = field(default_factory=dict)  # setting -> this run's value
    epochs: float | None = None
    steps: int | None = None
    train_seconds: float | None = None
    best_epoch: float | None = None
    validation: SetScores | None = None
    test: SetScores | None = None
    #: A live run's last logged step of its total, and who writes it.
    step: int | None = None
    max_steps: int | None = None
    writer: str | None = None
    #: What it trained towards (``--objective``: None or ``sft`` for the references) and
    #: the metric that ranked its candidates, as tables name it (``chrF``).
    objective: str | None = None
    ranker: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON for ``workbench runs --json``."""
        out = dict(vars(self))
        for role in ("validation", "test"):
            scores = getattr(self, role)
            out[role] = scores.to_dict() if scores is not None else None
        return out


def run_row(
    run_dir: Path, saved: SavedConfig | None = None, summary: RunSummary | None = None
) -> RunRow:
    """One run folder as a row; what it lacks (a run killed early) stays missing. A caller
    that has read the folder's config.json or summary already passes them in."""
    if saved is None:
        saved = read_saved_config(run_dir) or SavedConfig({})
    live = run_liveness(run_dir)
    if summary is None:
        summary = live.summary or RunSummary()
    step = latest_step(run_dir) if live.live else None
    defaults = preset_defaults(saved).settings
    changed = {
        key: value
        for key, value in saved.settings.items()
        if key not in NOT_A_CHOICE and key in defaults and defaults[key] != value
    }
    epochs = saved.value("epochs")
    objective = saved.value("objective")
    return RunRow(
        run_id=run_dir.name,
        run_dir=str(run_dir),
        preset=str(saved.preset or summary.preset or MISSING),
        status=live.status,
        changed=changed,
        epochs=float(epochs) if isinstance(epochs, int | float) else None,
        steps=summary.global_step,
        train_seconds=summary.train_seconds,
        best_epoch=best_epoch(summary),
        validation=summary.validation,
        test=summary.test,
        step=step.step if step else None,
        max_steps=step.max_steps if step else None,
        writer=live.record.who() if live.record and live.live else None,
        objective=str(objective) if objective is not None else None,
        ranker=ranked_by(saved, summary),
    )


def ranked_by(saved: SavedConfig, summary: RunSummary) -> str | None:
    """The metric that ranked a run's training candidates, as tables name it (``chrF``,
    from the summary), or the ``--rank-by`` value config.json holds while the run lives."""
    if summary.objective is not None and summary.objective.ranker:
        return summary.objective.ranker
    rank_by = saved.value("rank_by")
    return str(rank_by) if rank_by is not None else None


def latest_step(run_dir: Path) -> TrainStep | None:
    """The last training step a run logged (its progress while it lives), read from the
    end of its log: a block or two, however long the run."""
    # A step of another version does not read: the one before it says the progress.
    for event, _ in events_from_end(RunFolder(run_dir).metrics):
        if isinstance(event, TrainStep):
            return event
    return None


def status_text(row: RunRow) -> str:
    """``finished``, or a live run's ``running 42%`` (of its training steps)."""
    if row.step is None or not row.max_steps:
        return row.status
    return f"{row.status} {100 * row.step // row.max_steps}%"


def list_runs(output_root: Path) -> list[RunRow]:
    """Every run under ``output_root``, newest first. A run that no longer changes is
    read once per process (:func:`kept_row`): the TUI lists the runs every two seconds."""
    return [kept_row(folder) for folder in run_folders(output_root)]


#: Rows of ended runs, by folder, with the stamps of the files they were read from.
_ENDED_ROWS: dict[Path, tuple[tuple[Stamp, ...], RunRow]] = {}


def kept_row(run_dir: Path) -> RunRow:
    """A run's row; a run that has ended is read again only when one of the files a row
    is read from changed (a resume, a rewritten config), a live one every time (its
    status and progress change by the second)."""
    folder = RunFolder(run_dir)
    files = (folder.config, folder.summary, folder.writer_record, folder.log)
    stamps = tuple(file_stamp(path) for path in files)
    kept = _ENDED_ROWS.get(run_dir)
    if kept is not None and kept[0] == stamps:
        return kept[1]
    row = run_row(run_dir)
    if row.status in LIVE_STATUSES:
        _ENDED_ROWS.pop(run_dir, None)
    else:
        _ENDED_ROWS[run_dir] = (stamps, row)
    return row


def _scores(role: str, scores: SetScores | None, ranker: str | None = None) -> str:
    """A set's BLEU (and COMET, MetricX) before → after; on the test set, the Kocmi
    reading of each, or in a run that ranked its candidates (``ranker``, which is marked
    with its relatives) of its lead judge alone (:mod:`~workbench.core.views.verdict`)."""
    if scores is None:
        return f"{role} BLEU {MISSING}"
    after = with_ci(scores.bleu_after, scores.bleu_after_ci)

    def name(metric: str) -> str:
        return marked(metric, ranker, "rank") if ranker else metric

    lead = ranked_verdict(scores, ranker).lead if ranker else None

    def reading(metric: str, delta: float) -> str:
        # a ranked run's reading is on its lead judge alone, as its lines and report say
        return "" if lead is not None and metric != lead else agreement_brief(metric, delta)

    text = f"{role} {name('BLEU')} {scores.bleu_before:.2f} → {after}"
    if role != "test":  # the test set's change is the one a reader weighs
        return text
    text += reading("BLEU", scores.bleu_delta)
    for neural in (scores.comet, scores.metricx):
        if neural is not None:
            after = with_ci(neural.after, neural.after_ci)
            lower = " (lower is better)" if neural.lower_is_better else ""
            text += f"  {role} {name(neural.metric)}{lower} {neural.before:.2f} → {after}"
            text += reading(neural.metric, neural.delta)
    return text


def changes_text(row: RunRow) -> str:
    """``epochs=8 learning_rate=0.001``, or ``as preset``."""
    return (
        " ".join(f"{key}={setting_value(value)}" for key, value in row.changed.items())
        or "as preset"
    )


def objective_text(row: RunRow) -> str:
    """``cpo · chrF`` for a run trained past the references, "" for one trained on the
    references (``sft``, the default, left blank so that the table keeps its width)."""
    brief = objective_brief(row.objective, row.ranker)
    return "" if brief == "sft" else brief


def training_cells(row: RunRow) -> tuple[str, str, str, str]:
    """Epochs, steps, training time and best epoch as shown, a dash where missing."""
    return (
        MISSING if row.epochs is None else f"{row.epochs:g}",
        MISSING if row.steps is None else f"{row.steps:,}",
        MISSING if row.train_seconds is None else format_seconds(row.train_seconds),
        MISSING if row.best_epoch is None else f"{row.best_epoch:g}",
    )


def after_cells(row: RunRow) -> tuple[str, str]:
    """Validation and test BLEU after fine-tuning, each with its 95% interval."""

    def cell(scores: SetScores | None) -> str:
        return with_ci(scores.bleu_after, scores.bleu_after_ci) if scores else MISSING

    return cell(row.validation), cell(row.test)


#: What each part of a run's line is (printed above the lines by ``runs`` and ``sweep``).
RUN_ROW_HEADER = (
    "run, preset, status, training, best epoch (by validation BLEU, or COMET where the run "
    "selected on it), validation "
    "and test BLEU before → after (95% interval after; how often humans agree with a "
    "test delta that size, Kocmi et al. 2024), test COMET and MetricX (lower is better) "
    "where the run scored them, "
    "settings changed from the preset; a run trained past the references says its "
    "objective and the metric that ranked its candidates (cpo · chrF) after its status"
)


def run_row_line(row: RunRow) -> str:
    """A run in one line: id, preset, status, training, best epoch, scores, changes."""
    epochs, steps, seconds, best = training_cells(row)
    ranked = row.ranker if row.objective else None
    scores = f"{_scores('val', row.validation, ranked)}  {_scores('test', row.test, ranked)}"
    changes = changes_text(row)
    status = "  ".join(part for part in (status_text(row), objective_text(row)) if part)
    return (
        f"{row.run_id}  {row.preset}  {status}  {epochs} epochs / {steps} steps in "
        f"{seconds}  best epoch {best}  {scores}  {changes}"
    )
