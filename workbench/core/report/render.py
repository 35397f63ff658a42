"""The run report as one list of blocks, written as ``report.md`` for GitHub/GitLab and
as a self-contained HTML page.

:func:`report_blocks` walks the :class:`~workbench.core.report.contents.RunReport` once;
the Markdown and the HTML are both written from its blocks
(:mod:`workbench.core.views.blocks`), so they list the same sections in the same order
and say the same things. The Markdown links the SVG figures written next to it (so it
renders on a code host); the HTML inlines them with its CSS, loads nothing from anywhere
(no fonts, scripts or images by URL) and so opens offline and prints as is.
"""

from __future__ import annotations

from workbench.core import __version__
from workbench.core.report.cells import (
    BEFORE_AFTER_HEADER,
    NO_BREAKDOWN,
    SAMPLE_HEADER,
    before_after_rows,
    breakdown_note,
    by_length_table,
    changed_tables,
    console_header,
    console_rows,
    decoding_note,
    epoch_table,
    key_facts,
    report_settings_rows,
    sample_rows,
)
from workbench.core.report.cleaning_blocks import cleaning_blocks
from workbench.core.report.contents import RunReport
from workbench.core.report.lab_blocks import lab_blocks
from workbench.core.report.objective_blocks import objective_blocks
from workbench.core.report.picked_blocks import picked_blocks
from workbench.core.report.screenshots import offline_svg
from workbench.core.run_folder.layout import REPORT_FIGURES
from workbench.core.views.blocks import (
    Block,
    Code,
    Figure,
    Heading,
    LineBreak,
    Note,
    Paragraph,
    Table,
    html_document,
    markdown_document,
    with_code,
)
from workbench.core.views.score_text import CHANGED_HEADER

#: Where the Screenshots section has none to show.
NO_SCREENSHOTS = (
    "No screenshots yet: press F6 in `workbench tui` to save one of the pane on screen "
    "into the run folder, then report again."
)


def render_markdown(report: RunReport) -> str:
    """``report.md``: the report with its figures linked as SVG files beside it."""
    return markdown_document(report_blocks(report))


def render_html(report: RunReport) -> str:
    """``report.html``: one file with its CSS and SVG inline; no scripts, no URLs."""
    return html_document(report_blocks(report))


def report_blocks(report: RunReport) -> list[Block]:
    """The whole report, section by section, as the blocks both files are written from."""
    blocks: list[Block] = [
        Heading(f"Fine-tuning report: {report.name}", level=1),
        Paragraph(
            (
                f"Generated {report.generated} by workbench {__version__} from ",
                Code(str(report.run_dir)),
                ".",
            ),
            style="meta",
        ),
        *(Note(note) for note in report.notes),
        Heading("Summary"),
        Table(["", ""], [[k, v] for k, v in key_facts(report)]),
    ]
    cleaning = cleaning_blocks(report)
    if cleaning:
        blocks += [Heading("Data cleaning"), *cleaning]
    blocks += [
        Heading("BLEU before vs after fine-tuning"),
        Table(BEFORE_AFTER_HEADER, before_after_rows(report)),
        Paragraph(decoding_note(report), style="caption"),
    ]
    if report.summary.picked is not None:
        blocks += [
            Heading("Picked among candidates against beam search"),
            *picked_blocks(report.summary.picked),
        ]
    if report.summary.objective is not None:
        blocks += [
            Heading("Trained past the references"),
            *objective_blocks(report.summary.objective, report.summary.test, report.run_dir),
        ]
    blocks += [
        *_training_blocks(report),
        *_test_set_blocks(report),
        *_console_blocks(report),
        *_attention_blocks(report),
        Heading("Screenshots"),
    ]
    blocks += [
        Figure(
            shot.file,
            offline_svg(shot.svg),
            alt=shot.caption,
            caption=shot.caption,
            css_class="screenshot",
            png=shot.png,
        )
        for shot in report.screenshots
    ] or [Paragraph(with_code(NO_SCREENSHOTS))]
    lab = lab_blocks(report)
    if lab:
        blocks += [Heading("The Lab: the assignment's questions, measured"), *lab]
    blocks += [
        Heading("Settings"),
        Table(
            ["Setting", "Value", "Preset default (where changed)"],
            report_settings_rows(report),
            numeric=False,
        ),
    ]
    return blocks


def _training_blocks(report: RunReport) -> list[Block]:
    """Loss and BLEU per epoch: the table, the best epoch marked, and the two curves."""
    header, rows = epoch_table(report)
    return [
        Heading("Loss and BLEU per epoch"),
        Table(header, rows, ["best" if r.best else "" for r in report.epochs])
        if rows
        else Paragraph("No evaluation was logged for this run."),
        Figure(
            REPORT_FIGURES["loss"],
            report.figures.get("loss"),
            alt="Loss curves",
            caption="Training loss per logging step and validation loss per epoch.",
        ),
        Figure(
            REPORT_FIGURES["bleu"],
            report.figures.get("bleu"),
            alt="BLEU and chrF per epoch",
            caption="Validation BLEU and chrF after each epoch.",
        ),
    ]


def _test_set_blocks(report: RunReport) -> list[Block]:
    """The samples, the scores by source length, and the sentences that changed most."""
    samples = sample_rows(report)
    header, rows = by_length_table(report)
    blocks: list[Block] = [
        Heading("Sample translations before and after (test set)"),
        Table(SAMPLE_HEADER, samples)
        if samples
        else Paragraph("No samples (the run did not finish)."),
        Heading("Where the gain comes from (test set)"),
    ]
    blocks += (
        [Paragraph(breakdown_note(report), style="caption"), Table(header, rows)]
        if rows
        else [Paragraph(NO_BREAKDOWN)]
    )
    for title, changed, none in changed_tables(report):
        blocks += [
            Heading(title, level=3),
            Table(CHANGED_HEADER, changed) if changed else Paragraph(none),
        ]
    return blocks


def _console_blocks(report: RunReport) -> list[Block]:
    """The console's lines for this run, the judgement cell left to fill in."""
    blocks: list[Block] = [
        Heading("Translations tried in the console"),
        Paragraph(report.console_note, style="caption"),
    ]
    if report.console:
        blocks.append(Table(console_header(report), console_rows(report), judgement=True))
    return blocks


def _attention_blocks(report: RunReport) -> list[Block]:
    """The heatmap of one sentence, or why there is none."""
    att = report.attention
    if not att.svg:
        return [Heading(att.heading), Paragraph(f"No heatmap: {att.missing}.")]
    return [
        Heading(att.heading),
        Paragraph((f"Source: {att.sentence}", LineBreak(), f"Translation: {att.translation}")),
        Figure(
            REPORT_FIGURES["attention"],
            report.figures.get("attention"),
            alt=att.heading,
            caption=f"{att.view}. Rows are the translation, columns the source; each cell is "
            "the share of the row's attention in percent.",
            css_class="heatmap",
        ),
    ]
