"""Samples pane: source, reference, before, after and per-sentence BLEU, from a run.

Filled from the run that just finished, or, when the app opens on an output folder that
already holds a finished run, from that run's files. The rows are test-set sentences; the
header gives the test and validation scores with their intervals, each naming its set.
Enter opens the selected source in the Attention pane.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from workbench.core.run_folder import RunSummary, read_jsonl_counted, translations_file
from workbench.core.views.score_text import headline, older_run_line
from workbench.tui.messages import ShowAttention

MAX_ROWS = 500
#: What a row of a run's translations file holds; a row without them is skipped and counted.
SAMPLE_KEYS = {"source", "reference", "before", "after", "bleu_before", "bleu_after"}


class SamplesPane(Vertical):
    """Before/after translations of test-set sentences."""

    BINDINGS = [Binding("enter", "open_attention", "Attention", show=True)]

    def compose(self) -> ComposeResult:
        yield Static("No finished run yet: start one in the Training pane.", id="samples-summary")
        yield DataTable(id="samples-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="samples-detail")

    def on_mount(self) -> None:
        # Fixed shares of the width so all five columns show at 80 columns; the
        # highlighted row is shown in full below the table.
        width = max(70, self.app.size.width - 4)
        shares = (("source", 0.30), ("reference", 0.19), ("before", 0.19), ("after", 0.19))
        table = self.query_one(DataTable)
        for label, share in shares:
            table.add_column(label, width=int(width * share) - 2)
        table.add_column("BLEU b→a", width=10)

    @on(DataTable.RowHighlighted, "#samples-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        cells = event.data_table.get_row_at(event.cursor_row)
        names = ("source", "reference", "before", "after", "BLEU")
        text = Text()
        for name, cell in zip(names, cells, strict=True):
            text.append(f"{name:>9}: ", style="bold")
            text.append_text(cell if isinstance(cell, Text) else Text(str(cell)))
            text.append("\n")
        self.query_one("#samples-detail", Static).update(text)

    def show_run(self, run_dir: str, summary: RunSummary) -> None:
        """Fill from a summary: the five samples first, then the other test rows."""
        table = self.query_one(DataTable)
        table.clear()
        samples = list(summary.samples or [])
        seen = {s["source"] for s in samples}
        # A run made before test sets existed scored (and sampled) its validation set.
        rows = "test" if summary.test is not None else "validation"
        records, skipped = read_jsonl_counted(Path(run_dir) / translations_file(rows))
        for row in records:
            if len(samples) >= MAX_ROWS:
                break
            if not set(row) >= SAMPLE_KEYS:
                skipped += 1
                continue
            if row["source"] in seen:
                continue
            samples.append(row)  # scored once, by the run
        for s in samples:
            table.add_row(
                Text(s["source"]),
                Text(s["reference"]),
                Text(s["before"]),
                Text(s["after"]),
                f"{s['bleu_before']:.1f}→{s['bleu_after']:.1f}",
            )
        lines = [
            headline(scores)
            for role in ("test", "validation")
            if (scores := summary.scores(role)) is not None
        ]
        if not lines:
            lines = [older_run_line(summary) or "this run has no before/after scores"]
        lines.append(f"rows: {rows} sentences · {Path(run_dir).name} · Enter: attention")
        if skipped:
            lines.append(
                f"note: {skipped} unreadable line{'s' if skipped > 1 else ''} of "
                f"{translations_file(rows)} skipped (a writer cut short?)"
            )
        self.query_one("#samples-summary", Static).update(Text("\n".join(lines)))

    def selected_source(self) -> str | None:
        """The source sentence of the highlighted row."""
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        cell = table.get_row_at(table.cursor_row)[0]
        return cell.plain if isinstance(cell, Text) else str(cell)

    @on(DataTable.RowSelected, "#samples-table")
    def _row_selected(self) -> None:
        self.action_open_attention()

    def action_open_attention(self) -> None:
        source = self.selected_source()
        if source:
            self.post_message(ShowAttention(source))
