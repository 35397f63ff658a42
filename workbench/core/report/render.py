"""The run report as text: ``report.md`` for GitHub/GitLab and a self-contained HTML page.

Both are made from the same :class:`~workbench.core.report.model.RunReport` and list the same
sections in the same order. The markdown links the SVG figures written next to it (so it
renders on a code host); the HTML inlines them with its CSS, loads nothing from
anywhere (no fonts, scripts or images by URL) and so opens offline and prints as is.

Everything that came from a user or a model (console input, translations, settings) is
escaped: console input can hold ``<script>`` or Rich markup like ``[/bold]``, and must
show as typed.
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
from workbench.core.report.lab_blocks import Block, lab_blocks
from workbench.core.report.model import FIGURE_FILES, RunReport
from workbench.core.report.screenshots import offline_svg
from workbench.core.views.document import (
    escape_html,
    escape_markdown,
    html_page,
    html_table,
    md_table,
)
from workbench.core.views.score_text import CHANGED_HEADER
from workbench.core.views.svg import inline_svg

#: Where the Screenshots section has none to show.
NO_SCREENSHOTS = (
    "No screenshots yet: press F6 in `workbench tui` to save one of the pane on screen "
    "into the run folder, then report again."
)


def render_markdown(report: RunReport) -> str:
    """``report.md``: the report with its figures linked as SVG files beside it."""
    out = [f"# Fine-tuning report: {escape_markdown(report.name)}", ""]
    out.append(f"Generated {report.generated} by workbench {__version__} from `{report.run_dir}`.")
    out.append("")
    out += [f"> **Note:** {escape_markdown(n)}" for n in report.notes]
    if report.notes:
        out.append("")
    out += ["## Summary", ""]
    out += md_table(["", ""], [[k, v] for k, v in key_facts(report)])
    cleaning = cleaning_blocks(report)
    if cleaning:
        out += ["", "## Data cleaning", "", *_markdown_blocks(cleaning)[:-1]]
    out += ["", "## BLEU before vs after fine-tuning", ""]
    out += md_table(BEFORE_AFTER_HEADER, before_after_rows(report))
    out += ["", escape_markdown(decoding_note(report)), ""]
    out += ["## Loss and BLEU per epoch", ""]
    header, rows = epoch_table(report)
    out += md_table(header, rows) if rows else ["No evaluation was logged for this run."]
    out += [
        "",
        f"![Loss curves]({FIGURE_FILES['loss']})",
        "",
        f"![BLEU and chrF per epoch]({FIGURE_FILES['bleu']})",
        "",
    ]
    out += ["## Sample translations before and after (test set)", ""]
    samples = sample_rows(report)
    out += md_table(SAMPLE_HEADER, samples) if samples else ["No samples (the run did not finish)."]
    out += ["", "## Where the gain comes from (test set)", ""]
    header, rows = by_length_table(report)
    if rows:
        out += [escape_markdown(breakdown_note(report)), "", *md_table(header, rows)]
    else:
        out.append(NO_BREAKDOWN)
    for title, changed, none in changed_tables(report):
        out += ["", f"### {title}", ""]
        out += md_table(CHANGED_HEADER, changed) if changed else [none]
    out += [
        "",
        "## Translations tried in the console",
        "",
        escape_markdown(report.console_note),
        "",
    ]
    if report.console:
        out += md_table(console_header(report), console_rows(report))
        out.append("")
    att = report.attention
    out += [f"## {escape_markdown(att.heading)}", ""]
    if att.svg:
        out += [
            f"Source: {escape_markdown(att.sentence)}  ",
            f"Translation: {escape_markdown(att.translation)}  ",
            f"View: {escape_markdown(att.view)}; rows are the translation, columns the source; "
            "each "
            "cell is the share of the row's attention in percent.",
            "",
            f"![{escape_markdown(att.heading)}]({FIGURE_FILES['attention']})",
            "",
        ]
    else:
        out += [f"No heatmap: {escape_markdown(att.missing)}.", ""]
    out += ["## Screenshots", ""]
    for shot in report.screenshots:
        png = f" ([PNG]({shot.png}))" if shot.png else ""
        out += [
            f"![{escape_markdown(shot.caption)}]({shot.file})",
            "",
            f"*{shot.caption}*{png}",
            "",
        ]
    if not report.screenshots:
        out += [NO_SCREENSHOTS, ""]
    blocks = lab_blocks(report)
    if blocks:
        out += ["## The Lab: the assignment's questions, measured", ""]
        out += _markdown_blocks(blocks)
    out += ["## Settings", ""]
    out += md_table(
        ["Setting", "Value", "Preset default (where changed)"], report_settings_rows(report)
    )
    out.append("")
    return "\n".join(out)


def _markdown_blocks(blocks: list[Block]) -> list[str]:
    """Headings, paragraphs and tables as markdown lines, each followed by a blank one."""
    out: list[str] = []
    for block in blocks:
        if block[0] == "h3":
            out += [f"### {escape_markdown(block[1])}", ""]
        elif block[0] == "p":
            out += [escape_markdown(block[1]), ""]
        else:
            out += [*md_table(block[1], block[2]), ""]
    return out


# --------------------------------------------------------------------------- HTML


def _html_blocks(blocks: list[Block]) -> list[str]:
    """Headings, paragraphs and tables as HTML elements."""
    out: list[str] = []
    for block in blocks:
        if block[0] == "h3":
            out.append(f"<h3>{escape_html(block[1])}</h3>")
        elif block[0] == "p":
            out.append(f"<p>{escape_html(block[1])}</p>")
        else:
            out.append(html_table(block[1], block[2]))
    return out


def _figure(report: RunReport, key: str, caption: str, cls: str = "") -> str:
    svg = report.figures.get(key)
    if not svg:
        return ""
    attr = f' class="{cls}"' if cls else ""
    return (
        f"<figure{attr}>\n{inline_svg(svg)}\n"
        f'<figcaption class="caption">{escape_html(caption)}</figcaption></figure>'
    )


def render_html(report: RunReport) -> str:
    """``report.html``: one file with its CSS and SVG inline; no scripts, no URLs."""
    title = f"Fine-tuning report: {report.name}"
    body = [
        f"<h1>{escape_html(title)}</h1>",
        f'<p class="meta">Generated {escape_html(report.generated)} '
        f"by workbench {escape_html(__version__)} "
        f"from <code>{escape_html(report.run_dir)}</code>.</p>",
    ]
    body += [f'<p class="note"><strong>Note:</strong> {escape_html(n)}</p>' for n in report.notes]
    body += ["<h2>Summary</h2>", html_table(["", ""], [[k, v] for k, v in key_facts(report)])]
    cleaning = cleaning_blocks(report)
    if cleaning:
        body += ["<h2>Data cleaning</h2>", *_html_blocks(cleaning)]
    body += [
        "<h2>BLEU before vs after fine-tuning</h2>",
        html_table(BEFORE_AFTER_HEADER, before_after_rows(report)),
        f'<p class="caption">{escape_html(decoding_note(report))}</p>',
    ]
    body.append("<h2>Loss and BLEU per epoch</h2>")
    header, rows = epoch_table(report)
    body.append(
        html_table(header, rows, ["best" if r.best else "" for r in report.epochs])
        if rows
        else "<p>No evaluation was logged for this run.</p>"
    )
    body.append(
        _figure(report, "loss", "Training loss per logging step and validation loss per epoch.")
    )
    body.append(_figure(report, "bleu", "Validation BLEU and chrF after each epoch."))
    body.append("<h2>Sample translations before and after (test set)</h2>")
    samples = sample_rows(report)
    body.append(
        html_table(SAMPLE_HEADER, samples)
        if samples
        else "<p>No samples (the run did not finish).</p>"
    )
    body.append("<h2>Where the gain comes from (test set)</h2>")
    header, rows = by_length_table(report)
    body += (
        [f'<p class="caption">{escape_html(breakdown_note(report))}</p>', html_table(header, rows)]
        if rows
        else [f"<p>{escape_html(NO_BREAKDOWN)}</p>"]
    )
    for title, changed, none in changed_tables(report):
        body.append(f"<h3>{escape_html(title)}</h3>")
        body.append(
            html_table(CHANGED_HEADER, changed) if changed else f"<p>{escape_html(none)}</p>"
        )
    body += [
        "<h2>Translations tried in the console</h2>",
        f'<p class="caption">{escape_html(report.console_note)}</p>',
    ]
    if report.console:
        body.append(html_table(console_header(report), console_rows(report), judgement=True))
    att = report.attention
    body.append(f"<h2>{escape_html(att.heading)}</h2>")
    if att.svg:
        body.append(
            f"<p>Source: {escape_html(att.sentence)}<br>"
            f"Translation: {escape_html(att.translation)}</p>"
        )
        body.append(
            _figure(
                report,
                "attention",
                f"{att.view}. Rows are the translation, columns the source; "
                "each cell is the share of the row's attention in percent.",
                cls="heatmap",
            )
        )
    else:
        body.append(f"<p>No heatmap: {escape_html(att.missing)}.</p>")
    body.append("<h2>Screenshots</h2>")
    body += [
        f'<figure class="screenshot">\n{inline_svg(offline_svg(shot.svg))}\n'
        f'<figcaption class="caption">{escape_html(shot.caption)}</figcaption></figure>'
        for shot in report.screenshots
    ] or [f"<p>{escape_html(NO_SCREENSHOTS)}</p>"]
    blocks = lab_blocks(report)
    if blocks:
        body.append("<h2>The Lab: the assignment's questions, measured</h2>")
        body += _html_blocks(blocks)
    body += [
        "<h2>Settings</h2>",
        html_table(
            ["Setting", "Value", "Preset default (where changed)"],
            report_settings_rows(report),
            numeric=False,
        ),
    ]
    return html_page(title, body)
