"""What a real finished run leaves is what its run folder names (workbench.core.run_folder):
listed, the folder and its output folder hold nothing else, before and after a report. That
each named file is listed in docs/runs.md, and named nowhere else, is
tests/unit/test_run_folder.py's."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.runs import FinishedRun, named_paths
from workbench.core.report.write import create_report
from workbench.core.run_folder.layout import OutputFolder, RunFolder


def unnamed(folder: RunFolder) -> list[str]:
    """What the run folder holds that it does not name."""
    named = set(named_paths(folder))
    return sorted(path.name for path in folder.path.iterdir() if path not in named)


def test_a_finished_run_leaves_only_what_its_run_folder_names(finished_run: FinishedRun):
    run = RunFolder(Path(finished_run.result.run_dir))
    assert unnamed(run) == []
    left = set(run.path.iterdir())
    every_run_leaves = {
        run.config,
        run.metrics,
        run.summary,
        run.before,
        run.log,
        run.writer_lock,
        run.writer_record,
        run.dropped_pairs,
        run.translations("test"),
        run.translations("validation"),
        run.checkpoints,
        run.best_model,
        run.heatmaps,
    }
    assert every_run_leaves <= left, sorted(p.name for p in every_run_leaves - left)
    assert {run.initial_model, run.scratch_tokenizer} <= left  # the demo's scratch model
    output = OutputFolder(run.output_root)
    assert set(output.path.iterdir()) <= {output.runs, output.best_model, output.history}
    assert output.best_model.is_dir()


def test_a_report_writes_only_what_the_run_folder_names(finished_run: FinishedRun, tmp_path: Path):
    run = RunFolder(finished_run.copy_to(tmp_path / "out"))
    _, written = create_report(run.path)
    assert {run.report_markdown, run.report_html, run.report_figure("attention")} <= set(written)
    assert unnamed(run) == []
