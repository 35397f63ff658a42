"""A :class:`~.build.Comparison` as terminal text, ``compare.md`` and ``compare.html``.

The tables are built once (:func:`run_rows`, :func:`comparison_settings_rows`, :func:`test_rows`,
:func:`difference_rows`) and laid out three ways, with the run report's markdown and
HTML helpers, so the terminal, the markdown and the page never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workbench.core import __version__
from workbench.core.atomic import write_documents
from workbench.core.experiments.compare.build import Comparison
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
    TEST_HEADER,
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
    test_rows,
)
from workbench.core.experiments.table import run_row_line
from workbench.core.views.document import (
    escape_html,
    escape_markdown,
    html_page,
    html_table,
    md_table,
)
from workbench.core.views.svg import inline_svg
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
    return out + [f"  note: {note}" for note in comparison.notes]


def test_lines(comparison: Comparison) -> list[str]:
    """The test table with its caption, and why a run has no paired test."""
    out = []
    if comparison.paired:
        out += [f"Test set {test_caption(comparison)}"]
        out += _columns(TEST_HEADER, test_rows(comparison))
        out += ["", METRICS_CAPTION, *_columns(METRICS_HEADER, metrics_rows(comparison))]
    return out + not_paired_lines(comparison)


def by_length_lines(comparison: Comparison) -> list[str]:
    """Each run's test scores by source length, with the caption."""
    return [
        f"Test set by source length. {BY_LENGTH_CAPTION}",
        *_columns(by_length_header(comparison), by_length_rows(comparison)),
    ]


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


# --------------------------------------------------------------------------- markdown


def _md_figure(key: str, comparison: Comparison) -> list[str]:
    if key not in comparison.figures:
        return []
    return [f"![{FIGURE_TITLES[key][0]}]({FIGURE_FILES[key]})", ""]


def render_markdown(comparison: Comparison) -> str:
    """``compare.md``; the figures are the SVG files next to it."""
    names = " vs ".join(run.run_id for run in comparison.runs)
    out = [
        f"# Comparison: {escape_markdown(names)}",
        "",
        f"Generated {comparison.generated} by workbench {__version__}. Run A is the "
        "baseline of every test.",
        "",
        "## Runs",
        "",
    ]
    out += [*md_table(RUN_HEADER, run_rows(comparison)), "", "## Settings that differ", ""]
    out += (
        md_table(settings_header(comparison), comparison_settings_rows(comparison))
        if comparison.settings
        else ["None: the runs share every setting."]
    )
    out += [""] + [f"> **Note:** {escape_markdown(note)}" for note in comparison.notes]
    out += ["", "## Curves", ""]
    for key in FIGURE_FILES:
        out += _md_figure(key, comparison)
    out += ["## Test set: scores and paired tests", ""]
    if comparison.paired:
        out += [
            escape_markdown(test_caption(comparison)),
            "",
            *md_table(TEST_HEADER, test_rows(comparison)),
            "",
            escape_markdown(METRICS_CAPTION),
            "",
            *md_table(METRICS_HEADER, metrics_rows(comparison)),
        ]
    out += [line for text in not_paired_lines(comparison) for line in ("", escape_markdown(text))]
    out += ["", "## Test set by source length", "", escape_markdown(BY_LENGTH_CAPTION), ""]
    out += md_table(by_length_header(comparison), by_length_rows(comparison))
    for _, title, rows in difference_sections(comparison):
        out += ["", f"## {title}", ""]
        out += md_table(DIFFERENCE_HEADER, rows) if rows else ["None."]
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- HTML


def _html_figure(key: str, comparison: Comparison) -> str:
    svg = comparison.figures.get(key)
    if not svg:
        return ""
    return (
        f"<figure>\n{inline_svg(svg)}\n"
        f'<figcaption class="caption">{escape_html(FIGURE_TITLES[key][0])}, one line per run.'
        "</figcaption></figure>"
    )


def render_html(comparison: Comparison) -> str:
    """``compare.html``: one file with its CSS and SVG inline; no scripts, no URLs."""
    title = "Comparison: " + " vs ".join(run.run_id for run in comparison.runs)
    body: list[Any] = [
        f"<h1>{escape_html(title)}</h1>",
        f'<p class="meta">Generated {escape_html(comparison.generated)} '
        f"by workbench {escape_html(__version__)}. "
        "Run A is the baseline of every test.</p>",
        *(f'<p class="note"><strong>Note:</strong> {escape_html(n)}</p>' for n in comparison.notes),
        "<h2>Runs</h2>",
        html_table(RUN_HEADER, run_rows(comparison)),
        "<h2>Settings that differ</h2>",
        html_table(settings_header(comparison), comparison_settings_rows(comparison), numeric=False)
        if comparison.settings
        else "<p>None: the runs share every setting.</p>",
        "<h2>Curves</h2>",
        *(_html_figure(key, comparison) for key in FIGURE_FILES),
        "<h2>Test set: scores and paired tests</h2>",
    ]
    if comparison.paired:
        body += [
            f'<p class="caption">{escape_html(test_caption(comparison))}</p>',
            html_table(TEST_HEADER, test_rows(comparison)),
            f'<p class="caption">{escape_html(METRICS_CAPTION)}</p>',
            html_table(METRICS_HEADER, metrics_rows(comparison), numeric=False),
        ]
    body += [f"<p>{escape_html(text)}</p>" for text in not_paired_lines(comparison)]
    body += [
        "<h2>Test set by source length</h2>",
        f'<p class="caption">{escape_html(BY_LENGTH_CAPTION)}</p>',
        html_table(by_length_header(comparison), by_length_rows(comparison)),
    ]
    for _, heading, rows in difference_sections(comparison):
        body += [
            f"<h2>{escape_html(heading)}</h2>",
            html_table(DIFFERENCE_HEADER, rows) if rows else "<p>None.</p>",
        ]
    return html_page(title, body)


def write_comparison(comparison: Comparison, folder: Path) -> list[Path]:
    """Write compare.md, compare.html and the SVG figures into ``folder``."""
    comparison.figures = comparison.figures or draw_comparison_figures(comparison)
    files = {FIGURE_FILES[key]: svg for key, svg in comparison.figures.items()}
    files[COMPARE_MD] = render_markdown(comparison)
    files[COMPARE_HTML] = render_html(comparison)
    return write_documents(folder, files, "the comparison")
