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

import html
import re
from collections.abc import Sequence
from typing import Any

from workbench.core import __version__
from workbench.core.config import SCRATCH_MODEL, setting_value
from workbench.core.report.model import FIGURE_FILES, RunReport
from workbench.core.scores import (
    MISSING,
    N_BOOTSTRAP,
    SetScores,
    before_after,
    delta_text,
    format_p,
    with_ci,
)
from workbench.core.views.svg import FONT_STACK, inline_svg

JUDGEMENT = "Judgement (one line)"
_MD_SPECIAL = re.compile(r"([\\`*\[\]|]|(?<!\w)_|_(?!\w))")


def fmt(value: Any, digits: int = 2) -> str:
    """A number with fixed decimals, or :data:`MISSING` when missing."""
    if isinstance(value, bool) or value is None:
        return MISSING
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def epoch_label(epoch: float) -> str:
    """``3`` for a whole epoch, ``2.5`` for a partial one."""
    return f"{epoch:g}"


def model_text(model: str) -> str:
    """The model setting in words (``scratch`` means nothing to a reader of the report)."""
    if model == SCRATCH_MODEL:
        return "a small MarianMT built from scratch by the workbench (demo preset)"
    return model


def headline(report: RunReport) -> list[tuple[str, str]]:
    """The key facts of the run, label and value, for the top of both documents."""
    s = report.summary
    decode_text = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in (s.decoding or {}).items())
    rows = [
        ("Run", report.name),
        ("Status", report.status),
        ("Model", model_text(str(s.model or report.settings.get("model", "?")))),
        ("Data", f"{s.data or report.settings.get('data', '?')}: "
                 f"{fmt(s.train_pairs)} training / {fmt(s.validation_pairs)} "
                 f"validation / {fmt(s.test_pairs)} test pairs"),
    ]
    for role in ("test", "validation"):
        scores = s.scores(role)
        if scores is not None:
            rows.append((f"BLEU before → after, {scores.label}", before_after(scores, "bleu")))
    if s.test is None and (old := s.legacy_line()):
        rows.append(("BLEU before → after", old))
    rows += [
        ("BLEU tokenizer", s.bleu_tokenize or "?"),
        ("Before/after decoding", decode_text or "?"),
        ("Precision", ", ".join(f"{k.replace('_', ' ')} {setting_value(v)}"
                                for k, v in s.precision.items()) if s.precision else MISSING),
        ("Training", f"{fmt(s.global_step)} steps in {fmt(s.train_seconds, 1)} s"),
        ("Best checkpoint", s.best_checkpoint or MISSING),
    ]
    return rows


def settings_rows(report: RunReport) -> list[tuple[str, str, str]]:
    """(setting, value, the preset's value where this run changed it)."""
    rows = []
    for key, value in report.settings.items():
        default = report.preset_defaults.get(key, value)
        changed = "" if default == value or key == "preset" else setting_value(default)
        rows.append((key, setting_value(value), changed))
    return rows


def epoch_table(report: RunReport) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the per-epoch table (the best epoch marked)."""
    header = ["Epoch", "Step", "Training loss", "Validation loss", "BLEU", "chrF", "Best"]
    rows = [[epoch_label(r.epoch), fmt(r.step), fmt(r.train_loss, 3), fmt(r.val_loss, 3),
             fmt(r.bleu), fmt(r.chrf), "✓" if r.best else ""] for r in report.epochs]
    return header, rows


BEFORE_AFTER_HEADER = ["Set", "Metric", "Before (95% CI)", "After (95% CI)",
                       "Change (95% CI)", "p"]


def before_after_rows(report: RunReport) -> list[list[str]]:
    """BLEU and chrF before and after fine-tuning on the test and the validation set."""
    rows = []
    for role in ("test", "validation"):
        scores: SetScores | None = report.summary.scores(role)
        if scores is None:
            continue
        for name, key in (("BLEU", "bleu"), ("chrF", "chrf")):
            values = {suffix: getattr(scores, f"{key}_{suffix}") for suffix in
                      ("before", "before_ci", "after", "after_ci", "delta", "delta_ci", "p")}
            rows.append([scores.label, name, with_ci(values["before"], values["before_ci"]),
                         with_ci(values["after"], values["after_ci"]),
                         delta_text(values["delta"], values["delta_ci"]),
                         format_p(values["p"], scores.n_bootstrap)])
    return rows


def sample_rows(report: RunReport) -> list[list[str]]:
    """The before/after samples: source, reference, both outputs and sentence BLEU."""
    return [[str(x.get("source", "")), str(x.get("reference", "")), str(x.get("before", "")),
             str(x.get("after", "")), fmt(x.get("bleu_before")), fmt(x.get("bleu_after"))]
            for x in report.summary.samples or []]


SAMPLE_HEADER = ["Source", "Reference", "Before", "After", "BLEU before", "BLEU after"]
CONSOLE_HEADER = ["Time", "Model", "Source", "Translation", JUDGEMENT]


def console_rows(report: RunReport) -> list[list[str]]:
    """The console translations (the judgement column is left empty to fill in)."""
    return [[c.time.replace("T", " "), c.role or c.model, c.source, c.translation, ""]
            for c in report.console]


def decoding_note(report: RunReport) -> str:
    """Which set is which, and why per-epoch BLEU and before/after BLEU differ."""
    beams = report.settings.get("eval_num_beams", 1)
    test = report.summary.test
    validation = report.summary.validation
    sets = ""
    if test and validation:
        sets = (f"The test set ({test.name}, {test.size:,} pairs) was used for these "
                "before/after scores only, never to choose the epoch or the recipe: hand in "
                f"its numbers. The validation set ({validation.name}, {validation.size:,} "
                "pairs) chose the best epoch, so its after-score is optimistic. ")
    if not sets:
        return ("This run was made before test sets existed: its before/after scores (in "
                "the summary above) are on the validation set that also chose the best epoch, "
                "without intervals. Per-epoch scores use "
                f"{'greedy decoding' if beams == 1 else f'{beams} beams'}.")
    return (sets + "Intervals and p-values are sacreBLEU's paired bootstrap (1000 "
            "resamples; p tests after against before). Per-epoch scores use "
            f"{'greedy decoding' if beams == 1 else f'{beams} beams'} on the validation set "
            "(cheaper during training); before and after use the decoding shown above, the "
            "fine-tuned model reloaded from its saved folder.")


# --------------------------------------------------------------------------- markdown


def md(text: Any) -> str:
    """Text safe in a markdown table cell: no HTML, no formatting, no line breaks."""
    escaped = html.escape(str(text), quote=False)
    return _MD_SPECIAL.sub(r"\\\1", " ".join(escaped.split()))


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured markdown table; cells are escaped here."""
    lines = ["| " + " | ".join(md(h) for h in header) + " |",
             "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(md(c) if c else " " for c in row) + " |" for row in rows]
    return lines


# --------------------------------------------------------------------------- the Lab

#: A piece of a Lab section: ("h3", title), ("p", text) or ("table", header, rows).
Block = tuple[Any, ...]


def _pct(value: Any) -> str:
    return f"{value:.0%}" if isinstance(value, int | float) else MISSING


def lab_blocks(report: RunReport) -> list[Block]:
    """The Lab studies saved for this run, as headings, paragraphs and tables that the
    markdown and the HTML both render (empty when none was run)."""
    blocks: list[Block] = []
    decoding = report.lab.get("lab_decoding.json")
    if decoding:
        results = decoding.get("results") or []
        blocks += [("h3", "Decoding strategies"),
                   ("p", f"The first {fmt(decoding.get('size'))} sentences of the test set; "
                         "BLEU with sacreBLEU's 95% bootstrap interval and the paired p-value "
                         "against greedy; sampled rows are the mean of three seeds (interval "
                         "and p of the first), with the BLEU range over the seeds."),
                   ("table", ["Strategy", "BLEU (95% CI)", "p vs greedy", "Seeds ±", "chrF",
                              "Distinct", "Varies", "Repeats", "Length ratio", "ms/sentence"],
                    [[str(r.get("name", "")),
                      f"{fmt(r.get('bleu'))} ({fmt((r.get('bleu_ci') or [None])[0])}–"
                      f"{fmt((r.get('bleu_ci') or [None, None])[-1])})",
                      "baseline" if n == 0 else format_p(float(r.get("bleu_p", 1.0)), N_BOOTSTRAP),
                      fmt(r.get("spread")) if r.get("sampled") else MISSING,
                      fmt(r.get("chrf")), _pct(r.get("distinct")),
                      _pct(r.get("varies")) if r.get("sampled") else MISSING,
                      _pct(r.get("repeated")), fmt(r.get("length_ratio")),
                      fmt(r.get("ms_per_sentence"), 1)]
                     for n, r in enumerate(results) if isinstance(r, dict)]),
                   ("p", str(decoding.get("findings") or ""))]
    cache = report.lab.get("lab_cache.json")
    if cache:
        blocks += [("h3", "The KV cache"),
                   ("p", "After t generated tokens the decoder's self-attention caches "
                         "2·L·t·d floats (K and V of every layer and position) and the "
                         "cross-attention 2·L·S·d (K and V of the source, computed once); Q is "
                         "not cached, since only the newest position's query is ever used. "
                         f"Here L = {fmt(cache.get('layers'))} decoder layers, d = "
                         f"{fmt(cache.get('d_model'))}, S = {fmt(cache.get('source_tokens'))} "
                         f"source tokens, {cache.get('dtype', '')}. "
                         + ("The measured cache equals the formula at every t."
                            if cache.get("agrees") else
                            "The measured cache does NOT equal the formula.")),
                   ("table", ["t", "Self-attention: formula", "measured",
                              "Cross-attention: formula", "measured", "Bytes"],
                    [[fmt(z.get("steps")), fmt(z.get("self_formula")),
                      fmt(z.get("self_measured")), fmt(z.get("cross_formula")),
                      fmt(z.get("cross_measured")), fmt(z.get("total_bytes"))]
                     for z in cache.get("sizes") or [] if isinstance(z, dict)]),
                   ("table", ["t", "ms/token with the cache", "without", "Speed-up",
                              "Same output"],
                    [[fmt(r.get("new_tokens")), fmt(r.get("ms_cached")),
                      fmt(r.get("ms_uncached")), f"{fmt(r.get('speedup'))}×",
                      "yes" if r.get("identical") else "NO"]
                     for r in cache.get("timings") or [] if isinstance(r, dict)])]
    kinds = report.lab.get("lab_attention.json")
    if kinds:
        blocks += [("h3", "The three attentions"),
                   ("p", f"Sentence: {kinds.get('sentence', '')} → {kinds.get('translation', '')}."
                         " Entropy is the mean over a head's rows in bits (0: all on one "
                         "token; the ceiling: spread evenly over what the row can see); "
                         "agreement is the share of rows whose strongest source token is the "
                         "averaged view's."),
                   ("table", ["Kind", "Layer", "Head", "Entropy", "Ceiling", "Agreement"],
                    [[str(h.get("kind", "")), fmt(h.get("layer")), fmt(h.get("head")),
                      fmt(h.get("entropy_bits")), fmt(h.get("uniform_bits")),
                      _pct(h.get("agreement"))]
                     for h in kinds.get("heads") or [] if isinstance(h, dict)])]
    return blocks


def render_markdown(report: RunReport) -> str:
    """``report.md``: the report with its figures linked as SVG files beside it."""
    out = [f"# Fine-tuning report: {md(report.name)}", ""]
    out.append(f"Generated {report.generated} by workbench {__version__} from "
               f"`{report.run_dir}`.")
    out.append("")
    out += [f"> **Note:** {md(n)}" for n in report.notes]
    if report.notes:
        out.append("")
    out += ["## Summary", ""]
    out += md_table(["", ""], [[k, v] for k, v in headline(report)])
    out += ["", "## BLEU before vs after fine-tuning", ""]
    out += md_table(BEFORE_AFTER_HEADER, before_after_rows(report))
    out += ["", md(decoding_note(report)), ""]
    out += ["## Loss and BLEU per epoch", ""]
    header, rows = epoch_table(report)
    out += md_table(header, rows) if rows else ["No evaluation was logged for this run."]
    out += ["", f"![Loss curves]({FIGURE_FILES['loss']})", "",
            f"![BLEU and chrF per epoch]({FIGURE_FILES['bleu']})", ""]
    out += ["## Sample translations before and after (test set)", ""]
    samples = sample_rows(report)
    out += md_table(SAMPLE_HEADER, samples) if samples else ["No samples (the run did not "
                                                             "finish)."]
    out += ["", "## Translations tried in the console", "", md(report.console_note), ""]
    if report.console:
        out += md_table(CONSOLE_HEADER, console_rows(report))
        out.append("")
    out += ["## Cross-attention heatmap", ""]
    att = report.attention
    if att.svg:
        out += [f"Source: {md(att.sentence)}  ", f"Translation: {md(att.translation)}  ",
                f"View: {md(att.view)}; rows are the translation, columns the source; each "
                "cell is the share of the row's attention in percent.", "",
                f"![Cross-attention heatmap]({FIGURE_FILES['attention']})", ""]
    else:
        out += [f"No heatmap: {md(att.missing)}.", ""]
    blocks = lab_blocks(report)
    if blocks:
        out += ["## The Lab: the assignment's questions, measured", ""]
        for block in blocks:
            if block[0] == "h3":
                out += [f"### {md(block[1])}", ""]
            elif block[0] == "p":
                out += [md(block[1]), ""]
            else:
                out += [*md_table(block[1], block[2]), ""]
    out += ["## Settings", ""]
    out += md_table(["Setting", "Value", "Preset default (where changed)"],
                    settings_rows(report))
    out.append("")
    return "\n".join(out)


# --------------------------------------------------------------------------- HTML

CSS = f"""
:root {{ color-scheme: light; }}
body {{ font-family: {FONT_STACK}; margin: 2rem auto; max-width: 62rem; padding: 0 1rem;
       color: #1a1a1a; line-height: 1.45; }}
h1 {{ font-size: 1.6rem; margin-bottom: .2rem; }}
h2 {{ font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }}
.meta, .caption {{ color: #555; font-size: .9rem; }}
.note {{ background: #fff6d6; border-left: 4px solid #e0b000; padding: .5rem .8rem; }}
table {{ border-collapse: collapse; margin: .6rem 0; font-size: .92rem; }}
th, td {{ border: 1px solid #ccc; padding: .3rem .55rem; text-align: left;
         vertical-align: top; }}
td {{ overflow-wrap: anywhere; min-width: 4.5rem; }}
th {{ background: #f2f4f7; }}
th[scope="row"] {{ font-weight: normal; white-space: nowrap; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
tr.best td {{ font-weight: bold; background: #eef7ee; }}
td.judgement {{ min-width: 14rem; border-bottom: 2px dashed #999; background: #fcfcf6; }}
figure {{ margin: 1rem 0; overflow-x: auto; }}
figure svg {{ max-width: 100%; height: auto; }}
figure.heatmap svg {{ max-width: none; }}
@media print {{ body {{ margin: 0; max-width: none; }} h2 {{ break-after: avoid; }}
  figure, tr {{ break-inside: avoid; }} }}
"""

_NUMERIC = re.compile(r"^[-+–]?[\d,]*\.?\d*$|^–$|^✓$")


def h(text: Any) -> str:
    """HTML-escaped text."""
    return html.escape(str(text), quote=True)


def html_table(header: Sequence[str], rows: Sequence[Sequence[str]],
               row_classes: Sequence[str] | None = None, judgement: bool = False,
               numeric: bool = True) -> str:
    """A table of escaped cells; numbers right-aligned; an empty last cell to fill in.

    An all-empty header makes a key/value table: no header row, the first column as
    row headings.
    """
    keyed = not any(header)
    out = ["<table>"]
    if not keyed:
        out.append("<thead><tr>" + "".join(f"<th>{h(c)}</th>" for c in header)
                   + "</tr></thead>")
    out.append("<tbody>")
    for n, row in enumerate(rows):
        cls = f' class="{row_classes[n]}"' if row_classes and row_classes[n] else ""
        cells = []
        for m, cell in enumerate(row):
            if keyed and m == 0:
                cells.append(f'<th scope="row">{h(cell)}</th>')
            elif judgement and m == len(row) - 1:
                cells.append('<td class="judgement" contenteditable="true"></td>')
            elif numeric and cell and _NUMERIC.match(cell):
                cells.append(f'<td class="num">{h(cell)}</td>')
            else:
                cells.append(f"<td>{h(cell)}</td>")
        out.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _figure(report: RunReport, key: str, caption: str, cls: str = "") -> str:
    svg = report.figures.get(key)
    if not svg:
        return ""
    attr = f' class="{cls}"' if cls else ""
    return (f"<figure{attr}>\n{inline_svg(svg)}\n"
            f'<figcaption class="caption">{h(caption)}</figcaption></figure>')


def render_html(report: RunReport) -> str:
    """``report.html``: one file with its CSS and SVG inline; no scripts, no URLs."""
    title = f"Fine-tuning report: {report.name}"
    body = [f"<h1>{h(title)}</h1>",
            f'<p class="meta">Generated {h(report.generated)} by workbench {h(__version__)} '
            f"from <code>{h(report.run_dir)}</code>.</p>"]
    body += [f'<p class="note"><strong>Note:</strong> {h(n)}</p>' for n in report.notes]
    body += ["<h2>Summary</h2>", html_table(["", ""], [[k, v] for k, v in headline(report)])]
    body += ["<h2>BLEU before vs after fine-tuning</h2>",
             html_table(BEFORE_AFTER_HEADER, before_after_rows(report)),
             f'<p class="caption">{h(decoding_note(report))}</p>']
    body.append("<h2>Loss and BLEU per epoch</h2>")
    header, rows = epoch_table(report)
    body.append(html_table(header, rows, ["best" if r.best else "" for r in report.epochs])
                if rows else "<p>No evaluation was logged for this run.</p>")
    body.append(_figure(report, "loss", "Training loss per logging step and validation "
                                        "loss per epoch."))
    body.append(_figure(report, "bleu", "Validation BLEU and chrF after each epoch."))
    body.append("<h2>Sample translations before and after (test set)</h2>")
    samples = sample_rows(report)
    body.append(html_table(SAMPLE_HEADER, samples) if samples
                else "<p>No samples (the run did not finish).</p>")
    body += ["<h2>Translations tried in the console</h2>",
             f'<p class="caption">{h(report.console_note)}</p>']
    if report.console:
        body.append(html_table(CONSOLE_HEADER, console_rows(report), judgement=True))
    body.append("<h2>Cross-attention heatmap</h2>")
    att = report.attention
    if att.svg:
        body.append(f"<p>Source: {h(att.sentence)}<br>Translation: {h(att.translation)}</p>")
        body.append(_figure(report, "attention",
                            f"{att.view}. Rows are the translation, columns the source; "
                            "each cell is the share of the row's attention in percent.",
                            cls="heatmap"))
    else:
        body.append(f"<p>No heatmap: {h(att.missing)}.</p>")
    blocks = lab_blocks(report)
    if blocks:
        body.append("<h2>The Lab: the assignment's questions, measured</h2>")
        for block in blocks:
            if block[0] == "h3":
                body.append(f"<h3>{h(block[1])}</h3>")
            elif block[0] == "p":
                body.append(f"<p>{h(block[1])}</p>")
            else:
                body.append(html_table(block[1], block[2]))
    body += ["<h2>Settings</h2>",
             html_table(["Setting", "Value", "Preset default (where changed)"],
                        settings_rows(report), numeric=False)]
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{h(title)}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        *[part for part in body if part],
        "</body>",
        "</html>",
        "",
    ])
