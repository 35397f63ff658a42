"""A :class:`~.read.Comparison` as terminal text, ``compare.md`` and ``compare.html``.

The tables are built once (:func:`run_rows`, :func:`comparison_settings_rows`, :func:`test_rows`,
:func:`difference_rows`) and laid out twice: as terminal columns, and as one list of blocks
(:func:`comparison_blocks`) that the markdown and the page are both written from
(:mod:`workbench.core.views.blocks`), so the terminal, the markdown and the page never
disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from workbench.core import __version__
from workbench.core.atomic import write_documents
from workbench.core.experiments.compare.cells import (
    BY_LENGTH_CAPTION,
    COMPARE_HTML,
    COMPARE_MD,
    DIFFERENCE_HEADER,
    FIGURE_FILES,
    FIGURE_TITLES,
    METRICS_CAPTION,
    METRICS_HEADER,
    RUN_HEADER,
    by_length_header,
    by_length_rows,
    comparison_settings_rows,
    curves,
    difference_sections,
    draw_comparison_figures,
    metrics_rows,
    not_paired_lines,
    run_rows,
    settings_header,
    test_caption,
    test_header,
    test_rows,
)
from workbench.core.experiments.compare.ranked import objective_notes
from workbench.core.experiments.compare.read import Comparison
from workbench.core.experiments.table import run_row_line
from workbench.core.picking.picked_text import picked_lines
from workbench.core.report.picked_blocks import picked_blocks
from workbench.core.views.blocks import (
    Block,
    Figure,
    Heading,
    Note,
    Paragraph,
    Table,
    html_document,
    markdown_document,
)
from workbench.core.views.text_chart import line_chart_text

# --------------------------------------------------------------------------- terminal


def _columns(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    return [
        indent + "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in (header, *rows)
    ]


def settings_lines(comparison: Comparison) -> list[str]:
    """The settings that differ, one column per run, and the decoding note."""
    out = ["Settings that differ:"]
    out += (
        _columns(settings_header(comparison), comparison_settings_rows(comparison))
        if comparison.settings
        else ["  none: the runs share every setting"]
    )
    notes = [*objective_notes(comparison), *comparison.notes]
    return out + [f"  note: {note}" for note in notes]


def test_lines(comparison: Comparison) -> list[str]:
    """The test table with its caption, and why a run has no paired test."""
    out = []
    if comparison.paired:
        out += [f"Test set {test_caption(comparison)}"]
        out += _columns(test_header(comparison), test_rows(comparison))
        out += ["", METRICS_CAPTION, *_columns(METRICS_HEADER, metrics_rows(comparison))]
    return out + not_paired_lines(comparison)


def by_length_lines(comparison: Comparison) -> list[str]:
    """Each run's test scores by source length, with the caption."""
    return [
        f"Test set by source length. {BY_LENGTH_CAPTION}",
        *_columns(by_length_header(comparison), by_length_rows(comparison)),
    ]


#: The title of a run's pick against its own beam search (``train --pick``).
PICKED_TITLE = "Test set picked among candidates against beam search"


def render_text(comparison: Comparison, width: int = 72) -> str:
    """The comparison for a terminal or a pipe: runs, settings, curves, tests, sentences."""
    out = [f"Comparing {len(comparison.runs)} runs; A is the baseline of every test."]
    out += [f"  {run.letter}  {run_row_line(run.row)}" for run in comparison.runs]
    out += ["", *settings_lines(comparison)]
    for key, series in curves(comparison).items():
        if key == "train_loss":  # the per-epoch curves read better in a terminal
            continue
        out += [
            "",
            line_chart_text(series, title=FIGURE_TITLES[key][0], x_label="epoch", width=width),
        ]
    out += ["", *test_lines(comparison), "", *by_length_lines(comparison)]
    for run in comparison.runs:
        if run.picked is not None:
            out += ["", f"{PICKED_TITLE}, run {run.letter}:", *picked_lines(run.picked)]
    for letter, title, rows in difference_sections(comparison):
        out += ["", f"{title}:"]
        if not rows:
            out.append("  none")
        for row in rows:
            source, reference, first, chrf_first, other, chrf_other = row
            out += [
                f"  source     {source}",
                f"  reference  {reference}",
                f"  A ({chrf_first:>5})  {first}",
                f"  {letter} ({chrf_other:>5})  {other}",
                "",
            ]
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- documents


def render_markdown(comparison: Comparison) -> str:
    """``compare.md``; the figures are the SVG files next to it."""
    return markdown_document(comparison_blocks(comparison))


def render_html(comparison: Comparison) -> str:
    """``compare.html``: one file with its CSS and SVG inline; no scripts, no URLs."""
    return html_document(comparison_blocks(comparison))


def comparison_blocks(comparison: Comparison) -> list[Block]:
    """The comparison, section by section, as the blocks ``compare.md`` and
    ``compare.html`` are both written from."""
    blocks: list[Block] = [
        Heading("Comparison: " + " vs ".join(run.run_id for run in comparison.runs), level=1),
        Paragraph(
            f"Generated {comparison.generated} by workbench {__version__}. "
            "Run A is the baseline of every test.",
            style="meta",
        ),
        Heading("Runs"),
        Table(RUN_HEADER, run_rows(comparison)),
        Heading("Settings that differ"),
        Table(settings_header(comparison), comparison_settings_rows(comparison), numeric=False)
        if comparison.settings
        else Paragraph("None: the runs share every setting."),
        *(Note(note) for note in [*objective_notes(comparison), *comparison.notes]),
        Heading("Curves"),
        *(
            Figure(
                FIGURE_FILES[key],
                comparison.figures.get(key),
                alt=FIGURE_TITLES[key][0],
                caption=f"{FIGURE_TITLES[key][0]}, one line per run.",
            )
            for key in FIGURE_FILES
        ),
        Heading("Test set: scores and paired tests"),
    ]
    if comparison.paired:
        blocks += [
            Paragraph(test_caption(comparison), style="caption"),
            Table(test_header(comparison), test_rows(comparison)),
            Paragraph(METRICS_CAPTION, style="caption"),
            Table(METRICS_HEADER, metrics_rows(comparison), numeric=False),
        ]
    blocks += [Paragraph(text) for text in not_paired_lines(comparison)]
    for run in comparison.runs:
        if run.picked is not None:
            blocks += [Heading(f"{PICKED_TITLE}, run {run.letter}"), *picked_blocks(run.picked)]
    blocks += [
        Heading("Test set by source length"),
        Paragraph(BY_LENGTH_CAPTION, style="caption"),
        Table(by_length_header(comparison), by_length_rows(comparison)),
    ]
    for _, title, rows in difference_sections(comparison):
        blocks += [
            Heading(title),
            Table(DIFFERENCE_HEADER, rows) if rows else Paragraph("None."),
        ]
    return blocks


def write_comparison(comparison: Comparison, folder: Path) -> list[Path]:
    """Write compare.md, compare.html and the SVG figures into ``folder``."""
    comparison.figures = comparison.figures or draw_comparison_figures(comparison)
    files = {FIGURE_FILES[key]: svg for key, svg in comparison.figures.items()}
    files[COMPARE_MD] = render_markdown(comparison)
    files[COMPARE_HTML] = render_html(comparison)
    return write_documents(folder, files, "the comparison")
