"""Runs trained past the references (``train --objective``) in a comparison: what each
trained towards, the note when the runs differ in it, and each metric marked by the runs
whose training candidates it ranked.

A metric that ranked a run's candidates chose what that run was trained on, so it
overrates that run against any other (:mod:`~workbench.core.views.verdict`'s rule, role
``rank``): compare marks it ``(used to rank, run B)`` (a relative ``(of the ranker's
family, run B)``) and gives no Kocmi reading on its row, as the report does for one run.
"""

from __future__ import annotations

from workbench.core.experiments.compare.read import ComparedRun, Comparison
from workbench.core.records.scores import MetricChange
from workbench.core.views.ranked_text import ROLE, objective_brief
from workbench.core.views.score_text import metric_label
from workbench.core.views.verdict import relation


def objective_of(run: ComparedRun) -> str:
    """``cpo · chrF``, or ``sft`` for a run trained on the references."""
    return objective_brief(run.row.objective, run.row.ranker)


def objective_notes(comparison: Comparison) -> list[str]:
    """One line when the runs trained towards different objectives (none when they agree)."""
    briefs = {run.letter: objective_of(run) for run in comparison.runs}
    if len(set(briefs.values())) == 1:
        return []
    said = "; ".join(f"{letter}: {brief}" for letter, brief in briefs.items())
    return [
        f"The runs train towards different objectives ({said}): a difference between them "
        "includes the objective, and a metric that ranked a run's training candidates "
        "overrates that run, so it is marked where it is shown and not read as humans would."
    ]


def rank_marks(metric: str, runs: list[ComparedRun]) -> list[str]:
    """``used to rank, run B`` for each of ``runs`` whose candidates ``metric`` (or a
    relative) ranked."""
    return [
        f"{how}, run {run.letter}"
        for run in runs
        if run.row.ranker and (how := relation(metric, run.row.ranker, ROLE))
    ]


def rank_marked(change: MetricChange, runs: list[ComparedRun]) -> tuple[str, bool]:
    """The metric's label with the marks of :func:`rank_marks`, and whether it has any."""
    marks = rank_marks(change.metric, runs)
    label = metric_label(change)
    if not marks:
        return label, False
    return label.replace(change.metric, f"{change.metric} ({'; '.join(marks)})", 1), True


def rank_marked_name(metric: str, comparison: Comparison) -> str:
    """A column's metric (``chrF``) with the marks of every run it ranked for."""
    marks = rank_marks(metric, comparison.runs)
    return f"{metric} ({'; '.join(marks)})" if marks else metric
