"""Dataset pane: the cleaned train/validation pairs, counts, a length histogram, a filter.

Data loads on a worker so the app paints at once; the table shows one page of matches at
a time (``PAGE`` rows), so a 50,000-pair sample never renders in full.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Static
from textual_plotext import PlotextPlot

from workbench.core.config import RunConfig
from workbench.core.data import Pair, SplitData
from workbench.tui.messages import ForwardsWorkerFailures

PAGE = 200


def pair_lengths(pair: Pair) -> tuple[int, int]:
    """Source length in words and target length in characters (CJK has no spaces)."""
    target = pair.target
    cjk = sum(1 for ch in target if "\u3400" <= ch <= "\u9fff")
    tgt_len = len(target.replace(" ", "")) if cjk else len(target.split())
    return len(pair.source.split()), tgt_len


class DatasetPane(ForwardsWorkerFailures, Vertical):
    """Browse the data the run will train on."""

    BINDINGS = [
        Binding("/", "focus_filter", "Filter"),
        Binding("]", "next_page", "Next page"),
        Binding("[", "previous_page", "Prev page"),
    ]

    @dataclass
    class Loaded(Message):
        """The data finished loading on the worker."""

        data: SplitData | None
        error: str | None

    def __init__(self, config: RunConfig, **kwargs) -> None:
        super().__init__(**kwargs)
        self.config = config
        self.rows: list[tuple[str, Pair]] = []
        self.matches: list[tuple[str, Pair]] = []
        self.page = 0

    def compose(self) -> ComposeResult:
        yield Static("Loading data…", id="dataset-summary")
        with Horizontal(id="dataset-body"):
            with Vertical(id="dataset-left"):
                yield Input(placeholder="filter source/target text ( / )", id="dataset-filter")
                yield DataTable(id="dataset-table", cursor_type="row", zebra_stripes=True)
            yield PlotextPlot(id="dataset-hist")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("split", "source", "target", "src w", "tgt ch")
        # After the first frame: the read holds the GIL for ~0.2 s and would delay it.
        self.call_after_refresh(self.load)

    @work(thread=True, exclusive=True, exit_on_error=False, group="dataset")
    def load(self) -> None:
        """Read and split the data off the main thread."""
        from workbench.core.data import prepare_data
        from workbench.errors import WorkbenchError

        try:
            data = prepare_data(self.config)
        except WorkbenchError as err:
            self.post_message(self.Loaded(None, str(err)))
            return
        self.post_message(self.Loaded(data, None))

    def on_worker_state_changed(self, event: Any) -> None:
        super().on_worker_state_changed(event)
        if event.worker.error is not None:  # not a WorkbenchError: load() did not catch it
            self._show_failure(event.worker.error)

    def _show_failure(self, error: object) -> None:
        self.query_one("#dataset-summary", Static).update(
            Text(f"Could not load the data: {error}", style="bold red"))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        if message.error or message.data is None:
            self._show_failure(message.error)
            return
        summary = self.query_one("#dataset-summary", Static)
        data = message.data
        self.rows = ([("train", p) for p in data.train] + [("valid", p) for p in data.validation]
                     + [("test", p) for p in data.test])
        dropped = ", ".join(f"{v} {k}" for k, v in data.dropped.items() if v) or "nothing"
        levels = sorted({p.meta.get("hsk_level") for _, p in self.rows if p.meta.get("hsk_level")})
        topics = {p.meta.get("topic") for _, p in self.rows if p.meta.get("topic")}
        extra = f" · HSK levels {levels[0]}–{levels[-1]} · {len(topics)} topics" if levels else ""
        summary.update(Text(
            f"{data.origin}: {len(data.train):,} train / {len(data.validation):,} validation "
            f"({data.validation_name}) / {len(data.test):,} test ({data.test_name}) "
            f"(dropped {dropped}){extra}"
        ))
        self._draw_histogram()
        self.apply_filter("")

    def _draw_histogram(self) -> None:
        plot = self.query_one("#dataset-hist", PlotextPlot)
        lengths = [pair_lengths(p)[1] for _, p in self.rows]
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("target length")
        if lengths:
            plt.hist(lengths, bins=min(30, max(5, len(set(lengths)))))
        plot.refresh()

    @on(Input.Changed, "#dataset-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.apply_filter(event.value)

    def apply_filter(self, text: str) -> None:
        """Keep rows whose source or target contains ``text`` (case-insensitive)."""
        needle = text.strip().lower()
        self.matches = [
            (split, p) for split, p in self.rows
            if not needle or needle in p.source.lower() or needle in p.target.lower()
        ]
        self.page = 0
        self._show_page()

    def _show_page(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        start = self.page * PAGE
        for split, pair in self.matches[start : start + PAGE]:
            src_len, tgt_len = pair_lengths(pair)
            # Text() so that user data is never parsed as Rich markup.
            table.add_row(split, Text(pair.source), Text(pair.target), src_len, tgt_len)
        pages = max(1, -(-len(self.matches) // PAGE))
        table.border_subtitle = f"{len(self.matches):,} rows · page {self.page + 1}/{pages}"

    def action_focus_filter(self) -> None:
        self.query_one("#dataset-filter", Input).focus()

    def action_next_page(self) -> None:
        if (self.page + 1) * PAGE < len(self.matches):
            self.page += 1
            self._show_page()

    def action_previous_page(self) -> None:
        if self.page > 0:
            self.page -= 1
            self._show_page()
