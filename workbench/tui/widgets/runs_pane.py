"""Runs pane: every run of the output folder; mark some and compare them.

The table is ``workbench runs`` (:func:`workbench.core.experiments.table.list_runs`), re-read
every few seconds so that a run or a sweep started elsewhere shows up as it goes. Space
marks a row (the first marked is run A, the baseline of every test); ``c`` compares the
marked runs with :func:`workbench.core.experiments.compare.read.build_comparison` on a worker
thread (the paired tests take seconds) and shows the overlaid validation BLEU curves,
the settings that differ and the paired tests in ``workbench compare``'s own wording.
Enter opens the highlighted run: a finished one in the Samples pane, a live one in the
Training pane, which follows it. Until runs are compared, the chart draws the
highlighted run's validation BLEU per epoch, growing while the run is live.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer, Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from workbench.core.events import EvalDone
from workbench.core.experiments.table import (
    RunRow,
    after_cells,
    changes_text,
    list_runs,
    objective_text,
    status_text,
    training_cells,
)
from workbench.core.live.follow import followed_events
from workbench.core.run_folder.layout import OutputFolder, RunFolder
from workbench.core.views.numbers import LETTERS, format_seconds
from workbench.tui.messages import ForwardsWorkerFailures, OpenRun
from workbench.tui.widgets.charts import SeriesChart

if TYPE_CHECKING:
    from workbench.core.experiments.compare.read import Comparison

#: Seconds between two readings of the runs folder (a few small JSON files per run, and
#: a live run's metrics.jsonl for its progress and curve).
REFRESH_SECONDS = 2.0
#: Each column's label and the order in which it gives way when the pane is too narrow for
#: all of them (0: never). Every column is as wide as its widest cell, so no number is
#: cut; the detail line under the table shows the highlighted run's hidden columns too.
#: The scores come before the changed settings, which are long. The objective column
#: (``cpo · chrF``) is shown only when some run trained past the references.
OBJECTIVE = "objective"
COLUMNS = (
    ("", 0),
    ("run", 0),
    ("status", 0),
    (OBJECTIVE, 4),
    ("epochs", 2),
    ("best", 3),
    ("val BLEU after", 0),
    ("test BLEU after", 0),
    ("changed from preset", 1),
)
#: A DataTable cell's padding on each side (its default).
CELL_PADDING = 1
#: A vertical scrollbar's width, kept free so that a growing table never hides a column.
SCROLLBAR = 2
HELP = "space: mark · c: compare the marked runs (the first is A) · Enter: open"
COMPARE_HINT = "Mark two or more runs with space, then press c."


def row_cells(row: RunRow, mark: str) -> tuple[str, ...]:
    """One table row: the mark, who the run is, what it scored and changed."""
    epochs, _, _, best = training_cells(row)
    return (
        mark,
        row.run_id,
        status_text(row),
        objective_text(row),
        epochs,
        best,
        *after_cells(row),
        changes_text(row),
    )


def shown_columns(widths: list[int], room: int, empty: frozenset[int] = frozenset()) -> list[int]:
    """The columns (indices) that fit in ``room`` cells whole, dropping those that give
    way first (``COLUMNS``) until the rest fit; a column ``empty`` in every row (the
    objective where no run has one) is not shown at all."""
    shown = [i for i in range(len(widths)) if i not in empty]
    yielding = sorted((rank, i) for i, (_, rank) in enumerate(COLUMNS) if rank)
    for _, column in yielding:
        if sum(widths[i] + 2 * CELL_PADDING for i in shown) <= room:
            break
        if column in shown:
            shown.remove(column)
    return shown


def detail_line(row: RunRow) -> str:
    """The highlighted run in full: ``B 2026…-demo: 6 epochs, best 4 · learning_rate=0.001``."""
    epochs, _, _, best = training_cells(row)
    objective = f" · {objective_text(row)}" if objective_text(row) else ""
    return (
        f"{row.run_id}: {epochs} epochs, best {best}{objective} · changed from preset: "
        f"{changes_text(row)}"
    )


class RunsPane(ForwardsWorkerFailures, Vertical):
    """The runs table, the marks, and the comparison of the marked runs."""

    BINDINGS = [
        Binding("space", "mark", "Mark"),
        Binding("c", "compare", "Compare"),
        Binding("enter", "open_run", "Open in Samples"),
    ]

    @dataclass
    class Compared(Message):
        """A comparison of ``run_ids`` is ready, or why it could not be made (posted from
        the worker)."""

        run_ids: list[str]
        comparison: Comparison | None
        error: str = ""

    def __init__(self, output_root: Path) -> None:
        super().__init__()
        self.output_root = output_root
        self.rows: list[RunRow] | None = None  # None: not read yet, or unreadable
        self.marked: list[str] = []  # run ids in the order they were marked
        self.comparison: Comparison | None = None
        self.requested: list[str] = []  # the runs of the comparison last asked for

    def compose(self) -> ComposeResult:
        """The summary, the runs table, the highlighted run's detail and chart, a comparison."""
        yield Static("", id="runs-summary")
        yield DataTable(
            id="runs-table", cursor_type="row", zebra_stripes=True, cell_padding=CELL_PADDING
        )
        yield Static("", id="runs-detail")
        with Horizontal(id="runs-body"):
            yield SeriesChart("validation BLEU per epoch", "epoch", id="runs-chart")
            with ScrollableContainer(id="runs-compare-scroll"):
                # A hint wraps to the panel's width; a comparison keeps its own (tables).
                yield Static(COMPARE_HINT, id="runs-compare", classes="-hint")

    def on_mount(self) -> None:
        """Read the runs now and every :data:`REFRESH_SECONDS`, so new and live runs show."""
        self.refresh_runs()
        self.set_interval(REFRESH_SECONDS, self.refresh_runs)

    def on_resize(self) -> None:
        """Rebuild the table for the new width: the columns that fit are shown."""
        if self.rows is not None:
            self._fill_table()

    def refresh_runs(self) -> None:
        """Re-read the runs folder; the table is rebuilt only when something changed."""
        try:
            rows = list_runs(self.output_root)
        except OSError as err:  # the folder went away or became unreadable: say so, go on
            self.rows = None  # so that the next good reading fills the table again
            self.query_one("#runs-summary", Static).update(
                Text(f"cannot read {OutputFolder(self.output_root).runs}: {err.strerror or err}")
            )
            return
        if rows == self.rows:
            return
        if self.comparison is None:
            self.call_after_refresh(self._show_curve)  # a live run's curve grows
        current = self.highlighted()  # before the rows change: the cursor stays on it
        self.rows = rows
        ids = {row.run_id for row in rows}
        self.marked = [run_id for run_id in self.marked if run_id in ids]
        self._fill_table(current)

    def _fill_table(self, current: RunRow | None = None) -> None:
        table = self.query_one(DataTable)
        current = current or self.highlighted()
        rows = self.rows or []
        cells = [
            row_cells(
                row, LETTERS[self.marked.index(row.run_id)] if row.run_id in self.marked else ""
            )
            for row in rows
        ]
        widths = [
            max([len(label), *(len(r[i]) for r in cells)]) for i, (label, _) in enumerate(COLUMNS)
        ]
        column = [label for label, _ in COLUMNS].index(OBJECTIVE)
        empty = frozenset([column] if not any(r[column] for r in cells) else [])
        shown = shown_columns(widths, (self.size.width or self.app.size.width) - SCROLLBAR, empty)
        table.clear(columns=True)
        for i in shown:
            table.add_column(COLUMNS[i][0], width=widths[i])
        for row, row_text in zip(rows, cells, strict=True):
            table.add_row(*(Text(row_text[i]) for i in shown), key=row.run_id)
        if current is not None and current.run_id in {r.run_id for r in rows}:
            table.move_cursor(row=table.get_row_index(current.run_id))
        self._show_detail()
        where = OutputFolder(self.output_root).runs
        count = f"{len(rows)} run{'s' if len(rows) != 1 else ''} under {where}"
        seconds = format_seconds(REFRESH_SECONDS)
        self.query_one("#runs-summary", Static).update(
            Text(
                f"{count} (re-read every {seconds}) · {HELP}"
                if rows
                else f"no runs under {where} yet: start one in the Training pane, or "
                "`workbench train --headless` / `workbench sweep` in another terminal"
            )
        )

    @on(DataTable.RowHighlighted, "#runs-table")
    def _show_detail(self) -> None:
        row = self.highlighted()
        # One line (app.tcss), so the table keeps its height; an ellipsis says there is more.
        self.query_one("#runs-detail", Static).update(Text(detail_line(row) if row else ""))
        if self.comparison is None:
            self._show_curve()

    def _show_curve(self) -> None:
        """The highlighted run's validation BLEU per epoch (until runs are compared), read
        on a worker: a run that logged 300,000 steps takes seconds to read the first time,
        and the table must not wait for its curve."""
        self._read_curve(self.highlighted())

    @work(thread=True, exclusive=True, exit_on_error=False, group="runs-curve")
    def _read_curve(self, row: RunRow | None) -> None:
        points: list[tuple[float, float]] = []
        if row is not None:
            events = followed_events(RunFolder(Path(row.run_dir)).metrics).events
            by_epoch = {
                e.epoch: e.bleu  # a resumed run's repeated epoch: the last one counts
                for e in events
                if isinstance(e, EvalDone) and e.stage == "epoch" and e.split == "validation"
            }
            points = sorted(by_epoch.items())
        self.app.call_from_thread(self._draw_curve, row, points)

    def _draw_curve(self, row: RunRow | None, points: list[tuple[float, float]]) -> None:
        if self.comparison is not None or self.highlighted() != row:
            return  # a comparison, or another run highlighted since: its own drawing
        self.query_one("#runs-chart", SeriesChart).set_series(
            {row.run_id if row else "BLEU": points}
        )

    def highlighted(self) -> RunRow | None:
        """The run under the cursor."""
        table = self.query_one(DataTable)
        if not self.rows or table.row_count == 0:
            return None
        return self.rows[min(table.cursor_row, len(self.rows) - 1)]

    def action_mark(self) -> None:
        """Mark or unmark the highlighted run."""
        row = self.highlighted()
        if row is None:
            return
        if row.run_id in self.marked:
            self.marked.remove(row.run_id)
        elif len(self.marked) >= len(LETTERS):
            self.app.notify(
                f"compare takes at most {len(LETTERS)} runs; unmark one first", title="Mark"
            )
            return
        else:
            self.marked.append(row.run_id)
        self._fill_table()

    def action_compare(self) -> None:
        """Compare the marked runs (on a worker: the paired tests take seconds)."""
        if len(self.marked) < 2:
            self.app.notify("mark two or more runs with space first", title="Compare")
            return
        self.requested = list(self.marked)
        self._compare_text(f"comparing {', '.join(self.marked)}: running the paired tests…")
        self.compare(self.requested)

    @work(thread=True, exit_on_error=False, group="compare")
    def compare(self, run_ids: list[str]) -> None:
        """Build the comparison off the main thread; the result comes back as a message."""
        from workbench.core.experiments.compare.read import build_comparison
        from workbench.errors import WorkbenchError

        try:
            self.post_message(self.Compared(run_ids, build_comparison(run_ids, self.output_root)))
        except WorkbenchError as err:  # e.g. a run folder removed meanwhile
            self.post_message(self.Compared(run_ids, None, str(err)))

    @on(Compared)
    def _compared(self, message: Compared) -> None:
        from workbench.core.experiments.compare.cells import curves
        from workbench.core.experiments.compare.render import settings_lines, test_lines

        if message.run_ids != self.requested:
            return  # an earlier request that finished late: a newer one is on its way
        if message.comparison is None:
            self._compare_text(message.error)
            return
        self.comparison = comparison = message.comparison
        self.query_one("#runs-chart", SeriesChart).set_series(dict(curves(comparison)["bleu"]))
        lines = [f"{run.letter}  {run.run_id}" for run in comparison.runs]
        lines += ["", *settings_lines(comparison), "", *test_lines(comparison)]
        self._compare_text("\n".join(lines), hint=False)

    def _compare_text(self, text: str, hint: bool = True) -> None:
        """Show a hint or message (wrapped to the panel) or a comparison (as wide as it is)."""
        panel = self.query_one("#runs-compare", Static)
        panel.set_class(hint, "-hint")
        panel.update(Text(text))

    def action_open_run(self) -> None:
        """Open the highlighted run in the Samples pane."""
        row = self.highlighted()
        if row is not None:
            self.post_message(OpenRun(row.run_dir))

    @on(DataTable.RowSelected, "#runs-table")
    def _row_selected(self) -> None:
        self.action_open_run()
