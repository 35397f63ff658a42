"""Writing the run report: find the run, read it (:mod:`.read`), write ``report.md``,
``report.html`` and the SVG figures into its folder."""

from __future__ import annotations

from pathlib import Path

from workbench.core.atomic import write_documents
from workbench.core.config.run_config import DEFAULT_OUTPUT_DIR
from workbench.core.report.contents import RunReport
from workbench.core.report.read import build_report, resolve_run_dir
from workbench.core.report.render import render_html, render_markdown
from workbench.core.run_folder.layout import REPORT_FIGURES, REPORT_HTML, REPORT_MD, RunFolder


def write_report(report: RunReport) -> list[Path]:
    """Write report.md, report.html and the SVG figures into the run folder."""
    files = {REPORT_FIGURES[key]: svg for key, svg in report.figures.items()}
    files[REPORT_MD] = render_markdown(report)
    files[REPORT_HTML] = render_html(report)
    stale = set(REPORT_FIGURES.values()) - set(files)  # e.g. an old heatmap now absent
    return write_documents(report.run_dir, files, "the report", stale)


def create_report(
    run_dir: str | Path | None,
    output_root: str | Path | None = None,
    sentence: str | None = None,
    console_choice: str = "auto",
) -> tuple[RunReport, list[Path]]:
    """Find the run (default: the newest finished one), build its report and write it.

    ``output_root`` is where runs and the console history live; by default the run
    folder's own output folder, or ``translation_output`` when no run folder is given.
    """
    root = Path(output_root).expanduser() if output_root is not None else None
    run = resolve_run_dir(run_dir, root if root is not None else DEFAULT_OUTPUT_DIR)
    report = build_report(
        run,
        sentence=sentence,
        output_root=root if root is not None else RunFolder(run).output_root,
        console_choice=console_choice,
    )
    return report, write_report(report)
