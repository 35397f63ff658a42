"""Run folders of runs trained past the references (``train --objective``), written by
hand with fixed numbers: a config.json of the ``demo-cpo`` preset and a summary whose
``objective`` block holds the ranker and its ceiling, for report, compare and ``runs``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.helpers.data import scores_block
from workbench.core.records.objective_record import ObjectiveRecord
from workbench.core.records.picked_scores import PickedScores
from workbench.core.records.scores import MetricChange, SetScores
from workbench.core.records.summary import RunSummary


def change(metric: str, before: float, after: float, **extra) -> MetricChange:
    """One metric's change with a fixed interval and p."""
    delta = round(after - before, 2)
    return MetricChange(
        metric=metric,
        before=before,
        after=after,
        before_ci=[before - 1, before + 1],
        after_ci=[after - 1, after + 1],
        delta=delta,
        delta_ci=[delta - 0.5, delta + 0.5],
        p=0.001,
        test=extra.pop("test", "paired bootstrap"),
        **extra,
    )


def ranked_test(comet: bool = False) -> SetScores:
    """The tuned model's test set: BLEU +1.00, chrF +2.00 (the ranker's gain), chrF++ and
    TER beside them, COMET-22 +0.80 where ``comet``."""
    scores = SetScores.from_dict(scores_block("test", (10.0, 11.0), (30.0, 32.0)))
    assert scores is not None
    neural = change("COMET-22", 70.0, 70.8, test="paired t-test", model="Unbabel/wmt22-comet-da")
    return dataclasses.replace(
        scores,
        chrfpp=change("chrF++", 28.0, 29.5),
        ter=change("TER", 80.0, 78.0, lower_is_better=True),
        comet=neural if comet else None,
    )


def ceiling(test: SetScores) -> PickedScores:
    """The starting model picking by MBR with chrF: BLEU +2.00 (so the tuned model, at
    +1.00, kept half), chrF +4.00."""
    changes = [
        change("BLEU", 10.0, 12.0),
        change("chrF", 30.0, 34.0),
        *([change("COMET-22", 70.0, 71.0, test="paired t-test")] if test.comet else []),
    ]
    return PickedScores("mbr:chrF", "chrF", 8, "sample", changes, 1000, test.size, 0.62)


def ranked_summary(comet: bool = False, objective: str = "cpo") -> RunSummary:
    """A finished run trained by ``objective`` on 8 sampled candidates ranked by chrF."""
    test = ranked_test(comet)
    record = ObjectiveRecord(
        objective=objective,
        rank_by="chrf",
        ranker="chrF",
        candidates=8,
        candidates_from="sample",
        sources=300,
        pairs=280,
        skipped=20,
        beta=0.1 if objective != "best" else None,
        nll_weight=1.0 if objective == "cpo" else None,
        ceiling=ceiling(test),
    )
    return RunSummary(status="finished", preset="demo-cpo", test=test, objective=record)


def write_ranked_run(run_dir: Path, summary: RunSummary, preset: str = "demo-cpo") -> Path:
    """``run_dir`` as a finished run of ``preset`` with ``summary``, and its preferences."""
    from workbench.core.atomic import write_json
    from workbench.core.config.build import build_config
    from workbench.core.run_folder.layout import RunFolder
    from workbench.core.run_folder.summary_file import write_summary

    run_dir.mkdir(parents=True)
    write_json(RunFolder(run_dir).config, build_config(preset).to_dict())
    write_summary(run_dir, summary)
    if summary.objective is not None:
        RunFolder(run_dir).preferences.write_text('{"source": "a"}\n', encoding="utf-8")
    return run_dir
