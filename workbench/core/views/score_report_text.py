"""``workbench score``'s report as lines: each file's scores with their intervals, then
each file against the first, every delta read as a human would read it."""

from __future__ import annotations

from workbench.core.records.system_scores import MetricScore, ScoreReport
from workbench.core.views.human_agreement import agreement_line
from workbench.core.views.numbers import LETTERS, interval
from workbench.core.views.score_text import change_before_after, metric_label


def score_text(score: MetricScore) -> str:
    """``13.60 (11.72…15.77)``: a score with its 95% interval."""
    return f"{score.score:.2f} ({interval(score.ci)})"


def score_label(score: MetricScore) -> str:
    """``BLEU``, ``COMET-22 (Unbabel/wmt22-comet-da)``."""
    return f"{score.metric} ({score.model})" if score.model else score.metric


def score_table(report: ScoreReport) -> list[str]:
    """One row a metric, one column a file: each score with its interval."""
    letters = LETTERS[: len(report.systems)]
    rows = [["", *letters]]
    for i, first in enumerate(report.systems[0].scores):
        rows.append([score_label(first), *(score_text(s.scores[i]) for s in report.systems)])
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return [
        "  ".join(
            cell.ljust(w) if c == 0 else cell.rjust(w)
            for c, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def report_lines(report: ScoreReport) -> list[str]:
    """The report as ``workbench score`` prints it."""
    files = len(report.systems)
    against = [f"against {report.references}"] if report.references else []
    sources = [f"sources {report.sources}"] if report.sources else []
    lines = [
        f"scored {report.segments:,} segments of {files} file{'s' if files > 1 else ''} "
        + ", ".join([*against, *sources]),
    ]
    lines += [f"  {letter}: {s.name}" for letter, s in zip(LETTERS, report.systems, strict=False)]
    if report.tokenize:
        lines.append(f"BLEU tokenizer {report.tokenize} ({report.tokenize_reason})")
    lines += score_table(report)
    lower = [s.metric for s in report.systems[0].scores if s.metric.startswith(("TER", "MetricX"))]
    lines.append(
        f"(95% intervals: bootstrap over segments, {report.n_bootstrap} resamples; "
        f"sacreBLEU's for BLEU, chrF, chrF++ and TER; {', '.join(lower or ['TER'])}: lower is "
        "better)"
    )
    for letter, system in zip(LETTERS, report.systems, strict=False):
        if not system.against_first:
            continue
        lines.append(f"{letter} against A, paired on the same segments (A → {letter}):")
        for change in system.against_first:
            lines.append(
                f"  {metric_label(change)} {change_before_after(change, report.n_bootstrap)}"
            )
        reading = agreement_line([(c.metric, c.delta) for c in system.against_first])
        if reading:
            lines.append(f"  {reading}")
    lines += [f"signature {name}: {text}" for name, text in report.signatures.items()]
    return lines
