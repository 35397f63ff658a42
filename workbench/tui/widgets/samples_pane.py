"""Samples pane: source, reference, before, after and each sentence's score, from a run.

Filled from the run that just finished, or, when the app opens on an output folder that
already holds a finished run, from that run's files. The rows are test-set sentences; the
header gives the test and validation scores with their intervals, each naming its set
(and COMET's, when the run scored it). Each sentence's score is its COMET when the
run scored COMET (``--comet``), else its sentence chrF; ``o`` orders the rows by its
change (rose most first, fell most first, back to test order): where the gain comes from,
sentence by sentence. Enter opens the selected source in the Attention pane.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from workbench.core.records.run_records import Sample
from workbench.core.records.scores import MetricChange, score_change
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.layout import RunFolder
from workbench.core.run_folder.samples import read_translations
from workbench.core.views.human_agreement import agreement_text
from workbench.core.views.numbers import MISSING, number, signed
from workbench.core.views.score_text import change_before_after, headline
from workbench.tui.messages import ShowAttention

MAX_ROWS = 500
#: What a row of a run's translations file holds; a row without them is skipped and counted.
#: The change column's label in each order ``o`` cycles through: test order, chrF rose
#: most first (▼, largest first), chrF fell most first (▲, smallest first).
CHANGE_LABELS = ("Δ", "Δ ▼", "Δ ▲")
#: Columns of fixed width: the sentence chrF before→after and its change.
SCORE_WIDTH, CHANGE_WIDTH = 10, 6


def sentence_score(value: object) -> float | None:
    """A score read from a translations row: a number, or None (missing, null, a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def change_of(row: Sample, metric: str = "chrf") -> float | None:
    """A row's sentence ``metric`` (``chrf`` or ``comet``) after minus before, or None
    when the row has none."""
    before = sentence_score(getattr(row, f"{metric}_before"))
    after = sentence_score(getattr(row, f"{metric}_after"))
    if before is None or after is None:
        return None
    return score_change(before, after)


def row_metric(rows: list[Sample]) -> str:
    """``comet`` when the run scored each sentence with COMET, else ``chrf``."""
    return "comet" if any(change_of(r, "comet") is not None for r in rows) else "chrf"


def before_to_after(row: Sample, metric: str) -> str:
    """``1.2→5.0``: a row's sentence score before and after, or a dash when it has none."""
    before, after = getattr(row, f"{metric}_before"), getattr(row, f"{metric}_after")
    if before is None or after is None:
        return MISSING
    return f"{number(before, 1)}→{number(after, 1)}"


def in_order(rows: list[Sample], order: int, metric: str = "chrf") -> list[Sample]:
    """``rows`` in test order (0), by the change of their ``metric``, largest rise first (1)
    or largest fall first (2); rows without it last, ties in test order."""
    if order == 0:
        return list(rows)
    sign = -1 if order == 1 else 1
    scored = [r for r in rows if change_of(r, metric) is not None]
    unscored = [r for r in rows if change_of(r, metric) is None]
    return sorted(scored, key=lambda r: sign * (change_of(r, metric) or 0.0)) + unscored


def comet_line(change: MetricChange, n_bootstrap: int) -> str:
    """``COMET-22 61.20 → 74.56 (+13.36, …, paired t-test p < 0.001); humans agree 96%``;
    ``MetricX-24 (lower is better) 14.58 → 13.62 (…)``."""
    reading = agreement_text(change.metric, change.delta)
    name = f"{change.metric} (lower is better)" if change.lower_is_better else change.metric
    return f"{name} {change_before_after(change, n_bootstrap)}" + (
        f"; {reading}" if reading else ""
    )


class SamplesPane(Vertical):
    """Before/after translations of test-set sentences."""

    BINDINGS = [
        Binding("enter", "open_attention", "Attention", show=True),
        Binding("o", "next_order", "Order", show=True),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows: list[Sample] = []  # in test order, the five samples first
        self.shown: list[Sample] = []  # the table's rows, in its order
        self.order = 0  # index into CHANGE_LABELS
        self.metric = "chrf"  # what each sentence is scored by: chrf, or comet

    def compose(self) -> ComposeResult:
        """The run's score lines, the sentence table, and the highlighted row in full."""
        yield Static("No finished run yet: start one in the Training pane.", id="samples-summary")
        yield DataTable(id="samples-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="samples-detail")

    def on_mount(self) -> None:
        """Add the table's columns, sized to the terminal's width."""
        self._add_columns()

    def _add_columns(self) -> None:
        # Fixed shares of the width so every column shows at 80 columns; the highlighted
        # row is shown in full below the table.
        width = max(70, self.app.size.width - 4)
        text = width - SCORE_WIDTH - CHANGE_WIDTH - 2 * 6  # each column pads one cell a side
        shares = (("source", 0.37), ("reference", 0.21), ("before", 0.21), ("after", 0.21))
        table = self.query_one(DataTable)
        for label, share in shares:
            table.add_column(label, width=int(text * share))
        label = "COMET" if self.metric == "comet" else "chrF"
        table.add_column(f"{label} b→a", width=SCORE_WIDTH)
        table.add_column(CHANGE_LABELS[self.order], width=CHANGE_WIDTH)

    def _fill(self) -> None:
        """The table from ``rows`` in the current order (the cursor back on the first)."""
        table = self.query_one(DataTable)
        table.clear(columns=True)
        self._add_columns()
        self.shown = in_order(self.rows, self.order, self.metric)[:MAX_ROWS]
        for row in self.shown:
            table.add_row(
                Text(row.source),
                Text(row.reference),
                Text(row.before),
                Text(row.after),
                before_to_after(row, self.metric),
                signed(change_of(row, self.metric), 1),
            )

    @on(DataTable.RowHighlighted, "#samples-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if not 0 <= event.cursor_row < len(self.shown):
            return
        row = self.shown[event.cursor_row]
        text = Text()
        for name in ("source", "reference", "before", "after"):
            text.append(f"{name:>9}: ", style="bold")
            text.append(str(getattr(row, name)) + "\n")
        text.append(f"{'scores':>9}: ", style="bold")
        parts = [f"BLEU {before_to_after(row, 'bleu')}"]
        for metric, name in (("chrf", "chrF"), ("comet", "COMET")):
            change = change_of(row, metric)
            if change is not None:
                parts.append(f"{name} {before_to_after(row, metric)} ({signed(change, 1)})")
        text.append(" · ".join(parts))
        self.query_one("#samples-detail", Static).update(text)

    def show_run(self, run_dir: str, summary: RunSummary) -> None:
        """Fill from a summary: the five samples first, then the other test rows."""
        samples = list(summary.samples or [])
        seen = {s.source for s in samples}
        rows = "test"
        records, skipped = read_translations(Path(run_dir), rows)
        for row in records:
            if row.source in seen:
                continue
            samples.append(row)  # scored once, by the run
        self.rows = samples
        self.metric = row_metric(samples)
        self._fill()
        lines = []
        for role in ("test", "validation"):
            scores = summary.scores(role)
            if scores is not None:
                lines.append(headline(scores))
                lines += [f"  {comet_line(c, scores.n_bootstrap)}" for c in scores.more if c.model]
        if not lines:
            lines = ["this run has no before/after scores"]
        lines.append(f"rows: {rows} sentences · {Path(run_dir).name} · o: order · Enter: attention")
        if skipped:
            lines.append(
                f"note: {skipped} unreadable line{'s' if skipped > 1 else ''} of "
                f"{RunFolder(Path(run_dir)).translations(rows).name} skipped (a writer cut short?)"
            )
        if samples and all(change_of(r, self.metric) is None for r in samples):
            lines.append("note: this run's rows have no sentence chrF to order them by")
        self.query_one("#samples-summary", Static).update(Text("\n".join(lines)))

    def action_next_order(self) -> None:
        """Test order → the sentence score (COMET, else chrF) rose most first → fell most
        first → test order."""
        self.order = (self.order + 1) % len(CHANGE_LABELS)
        self._fill()

    def selected_source(self) -> str | None:
        """The source sentence of the highlighted row."""
        row = self.query_one(DataTable).cursor_row
        return self.shown[row].source if 0 <= row < len(self.shown) else None

    @on(DataTable.RowSelected, "#samples-table")
    def _row_selected(self) -> None:
        self.action_open_attention()

    def action_open_attention(self) -> None:
        """Enter: the highlighted sentence in the Attention pane."""
        source = self.selected_source()
        if source:
            self.post_message(ShowAttention(source))
