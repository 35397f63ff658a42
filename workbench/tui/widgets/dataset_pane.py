"""Dataset pane: the cleaned pairs of each split, counts, a length histogram, a filter, and
(``x``) the pairs cleaning dropped, each with the rule that dropped it.

Data loads on a worker so the app paints at once (from the prepared-data cache when a run
prepared it); the table shows one page of matches at a time (``PAGE`` rows), and rows are
found in Arrow (:class:`~workbench.core.data.pair_rows.PairRows`), so a million pairs are
never all read into Python. The source and
target columns share the table's width by what their text needs, counted in terminal
cells (a Chinese character takes two), so that neither is cut to a few characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Static
from textual.worker import Worker
from textual_plotext import PlotextPlot

from workbench.core.config.run_config import RunConfig
from workbench.core.data.pair import Pair
from workbench.core.data.pair_rows import PairRows
from workbench.core.data.splits import SplitData
from workbench.core.languages import length_unit, length_units
from workbench.tui.messages import ForwardsWorkerFailures
from workbench.tui.widgets.charts import integer_ticks

PAGE = 200
#: The table's columns and the fixed widths of all but source and target (None); the
#: first is the split, or the cleaning rule while the dropped pairs are shown.
COLUMNS: tuple[tuple[str, int | None], ...] = (
    ("split", 5),
    ("source", None),
    ("target", None),
    ("src w", 5),
    ("tgt ch", 6),
)
#: Cells the table spends besides its columns: the vertical scrollbar.
SCROLLBAR = 2
#: Rows measured for the columns' needs and the HSK levels and topics: enough for a
#: percentile, cheap at a million pairs.
MEASURED_ROWS = 20_000
#: The first column while the dropped pairs are shown: the rule (``repeated source``).
RULE_COLUMN = ("dropped by", 15)
#: Pairs the histogram counts at most (evenly spread over a larger set).
HISTOGRAM_ROWS = 20_000
#: Histogram bars at most: one per length while the lengths span no more than this.
MAX_BINS = 30


def text_need(texts: list[str]) -> int:
    """Cells that fit nine in ten of ``texts`` (terminal cells: CJK characters take two)."""
    widths = sorted(cell_len(text) for text in texts)
    return widths[int(0.9 * (len(widths) - 1))] if widths else 1


def share_width(free: int, source_need: int, target_need: int) -> tuple[int, int]:
    """Source and target widths from ``free`` cells: what each needs when both fit (the
    rest to the target), else shares in proportion to their needs, never under 8 cells."""
    if source_need + target_need <= free:
        return source_need, free - source_need
    source = round(free * source_need / max(1, source_need + target_need))
    source = min(max(source, 8), max(8, free - 8))
    return source, max(8, free - source)


def length_bins(lengths: list[int]) -> tuple[list[int], list[int]]:
    """Whole-number bins over ``lengths``: each bin's first length and its count.

    One bin per length while there are at most ``MAX_BINS`` of them, else bins of a whole
    number of lengths each, so that every bin is a range of real lengths.
    """
    if not lengths:
        return [], []
    low, high = min(lengths), max(lengths)
    width = max(1, -(-(high - low + 1) // MAX_BINS))
    starts = list(range(low, high + 1, width))
    counts = [0] * len(starts)
    for length in lengths:
        counts[(length - low) // width] += 1
    return starts, counts


def pair_lengths(pair: Pair, source_lang: str, target_lang: str) -> tuple[int, int]:
    """Source and target lengths as cleaning counts them: words, or characters for a
    language written without spaces (Chinese)."""
    return (
        len(length_units(pair.source, length_unit(source_lang))),
        len(length_units(pair.target, length_unit(target_lang))),
    )


class DatasetPane(ForwardsWorkerFailures, Vertical):
    """Browse the data the run will train on."""

    BINDINGS = [
        Binding("/", "focus_filter", "Filter"),
        Binding("]", "next_page", "Next page"),
        Binding("[", "previous_page", "Prev page"),
        Binding("x", "toggle_dropped", "Dropped pairs"),
    ]

    @dataclass
    class Loaded(Message):
        """The data finished loading on the worker."""

        data: SplitData | None
        error: str | None

    def __init__(self, config: RunConfig, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.config = config
        self.rows = PairRows([])
        self.kept_rows = PairRows([])
        #: The pairs cleaning took out, by rule ("long (kept)" when only counted).
        self.dropped_rows = PairRows([])
        self.showing_dropped = False
        self.matches = PairRows([])
        self.page = 0
        # Cells nine in ten sources and targets need; a guess until the data is read.
        self.needs = (40, 24)
        self.widths: tuple[int, ...] = ()

    def compose(self) -> ComposeResult:
        """The summary line, the filter and the pairs table, and the length histogram beside."""
        yield Static("Loading data…", id="dataset-summary")
        with Horizontal(id="dataset-body"):
            with Vertical(id="dataset-left"):
                yield Input(placeholder="filter source/target text ( / )", id="dataset-filter")
                yield DataTable(id="dataset-table", cursor_type="row", zebra_stripes=True)
            yield PlotextPlot(id="dataset-hist")

    def on_mount(self) -> None:
        """Lay out the table's columns, and load the data after the first frame."""
        # A first guess from the screen's width; fit_columns refits once the table is laid out.
        self._set_columns(self._column_widths(self.app.size.width))
        # After the first frame: the read holds the GIL for ~0.2 s and would delay it.
        self.call_after_refresh(self.load)

    def on_resize(self) -> None:
        """Refit the source and target columns to the new width, once it is laid out."""
        self.call_after_refresh(self.fit_columns)

    def _columns(self) -> tuple[tuple[str, int | None], ...]:
        return (RULE_COLUMN, *COLUMNS[1:]) if self.showing_dropped else COLUMNS

    def _column_widths(self, table_width: int) -> tuple[int, ...]:
        columns = self._columns()
        padding = 2 * self.query_one(DataTable).cell_padding * len(columns)
        fixed = sum(width or 0 for _, width in columns)
        source, target = share_width(table_width - fixed - padding - SCROLLBAR, *self.needs)
        return tuple(width or (source if label == "source" else target) for label, width in columns)

    def _set_columns(self, widths: tuple[int, ...]) -> None:
        table = self.query_one(DataTable)
        table.clear(columns=True)
        for (label, _), width in zip(self._columns(), widths, strict=True):
            table.add_column(label, width=width)
        self.widths = widths

    def fit_columns(self) -> None:
        """Give source and target their share of the table's current width."""
        table = self.query_one(DataTable)
        widths = self._column_widths(table.size.width)
        if not table.size.width or widths == self.widths:
            return
        row = table.cursor_row
        self._set_columns(widths)
        self._show_page()
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1))

    @dataclass
    class Preparing(Message):
        """A line of progress while the data is prepared (not cached yet)."""

        line: str

    @work(thread=True, exclusive=True, exit_on_error=False, group="dataset")
    def load(self) -> None:
        """Read and split the data off the main thread: what a run of these settings
        prepared and cached, when one did (no model or tokenizer is loaded for it)."""
        from workbench.core.data.prepared import prepare_split
        from workbench.core.events import DataProgress, Event
        from workbench.core.views.event_text import data_progress_line
        from workbench.errors import WorkbenchError

        def progress(event: Event) -> None:
            if isinstance(event, DataProgress):
                self.post_message(self.Preparing(data_progress_line(event).strip()))

        try:
            data = prepare_split(self.config, on_event=progress, browse=True)
        except WorkbenchError as err:
            self.post_message(self.Loaded(None, str(err)))
            return
        self.post_message(self.Loaded(data, None))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A crash in the load worker also shows in the summary, where the data would be."""
        super().on_worker_state_changed(event)
        if event.worker.error is not None:  # not a WorkbenchError: load() did not catch it
            self._show_failure(event.worker.error)

    def _show_failure(self, error: object) -> None:
        self.query_one("#dataset-summary", Static).update(
            Text(f"Could not load the data: {error}", style="bold red")
        )

    @on(Preparing)
    def _preparing(self, message: Preparing) -> None:
        self.query_one("#dataset-summary", Static).update(Text(f"Preparing the {message.line}"))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        if message.error or message.data is None:
            self._show_failure(message.error)
            return
        summary = self.query_one("#dataset-summary", Static)
        data = message.data
        self.kept_rows = PairRows(
            [("train", data.train), ("valid", data.validation), ("test", data.test)]
        )
        by_rule: dict[str, list[Pair]] = {}
        for d in data.cleaning.dropped:
            label = f"{d.rule} (kept)" if d.kept else d.rule
            by_rule.setdefault(label, []).append(Pair(d.source, d.target))
        self.dropped_rows = PairRows(list(by_rule.items()))
        self.rows = self.dropped_rows if self.showing_dropped else self.kept_rows
        counts = ", ".join(f"{v} {k}" for k, v in data.dropped.items() if v) or "nothing"
        dropped = f"dropped {counts}; x shows them" if data.cleaning.dropped else "dropped nothing"
        spread = [p for _, p in self.kept_rows.spread(MEASURED_ROWS)]
        levels = sorted({p.meta.get("hsk_level") for p in spread if p.meta.get("hsk_level")})
        topics = {p.meta.get("topic") for p in spread if p.meta.get("topic")}
        extra = f" · HSK levels {levels[0]}–{levels[-1]} · {len(topics)} topics" if levels else ""
        text = (
            f"{data.origin}: {len(data.train):,} train / {len(data.validation):,} validation "
            f"({data.validation_name}) / {len(data.test):,} test ({data.test_name}) "
            f"({dropped}){extra}"
        )
        summary.update(Text(text))
        measured = [p for _, p in self.rows.spread(MEASURED_ROWS)]
        self.needs = (
            text_need([p.source for p in measured]),
            text_need([p.target for p in measured]),
        )
        self._draw_histogram()
        self.apply_filter("")
        self.fit_columns()

    def _draw_histogram(self) -> None:
        plot = self.query_one("#dataset-hist", PlotextPlot)
        shown = self.rows.spread(HISTOGRAM_ROWS)
        lengths = [self._lengths(p)[1] for _, p in shown]
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        of = f" ({len(shown):,} of {len(self.rows):,})" if len(shown) < len(self.rows) else ""
        plt.title(f"target length{of}")
        starts, counts = length_bins(lengths)
        if starts:
            # Bars over whole-number bins with whole-number ticks: plt.hist labels counts
            # and lengths as floats (994.0, 3.6).
            plt.bar(starts, counts, width=1)
            plt.xticks(integer_ticks(starts[0], starts[-1], most=5))
            plt.yticks(integer_ticks(0, max(counts), most=5))
        plot.refresh()

    @on(Input.Changed, "#dataset-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.apply_filter(event.value)

    def apply_filter(self, text: str) -> None:
        """Keep rows whose source or target contains ``text`` (case-insensitive); among the
        dropped pairs, the rule's name matches too (``copy``)."""
        self.matches = self.rows.matching(text, labels_match=self.showing_dropped)
        self.page = 0
        self._show_page()

    def _show_page(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        start = self.page * PAGE
        for split, pair in self.matches[start : start + PAGE]:
            src_len, tgt_len = self._lengths(pair)
            # Text() so that user data is never parsed as Rich markup.
            table.add_row(split, Text(pair.source), Text(pair.target), src_len, tgt_len)
        pages = max(1, -(-len(self.matches) // PAGE))
        table.border_subtitle = f"{len(self.matches):,} rows · page {self.page + 1}/{pages}"

    def _lengths(self, pair: Pair) -> tuple[int, int]:
        return pair_lengths(pair, self.config.data_source_lang, self.config.data_target_lang)

    def action_toggle_dropped(self) -> None:
        """Show the pairs cleaning dropped, with their rule; again for the kept ones."""
        self.showing_dropped = not self.showing_dropped
        self.rows = self.dropped_rows if self.showing_dropped else self.kept_rows
        table = self.query_one(DataTable)
        self._set_columns(self._column_widths(table.size.width or self.app.size.width))
        self.apply_filter(self.query_one("#dataset-filter", Input).value)
        what = "dropped by cleaning" if self.showing_dropped else "kept"
        table.border_title = f"pairs {what} (x: switch)"

    def action_focus_filter(self) -> None:
        """/: into the filter field, to narrow the pairs to those with a text."""
        self.query_one("#dataset-filter", Input).focus()

    def action_next_page(self) -> None:
        """]: the next page of matching pairs, if there is one."""
        if (self.page + 1) * PAGE < len(self.matches):
            self.page += 1
            self._show_page()

    def action_previous_page(self) -> None:
        """[: the previous page of matching pairs."""
        if self.page > 0:
            self.page -= 1
            self._show_page()
