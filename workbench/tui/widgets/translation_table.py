"""The Translate pane's history table: a row per line sent to one model, filled in place.

A row is added the moment a line is sent ("translating…") and filled when its answer
comes, if it is still there (Ctrl-L may have cleared it meanwhile). The table keeps each
row's :class:`Entry` (the whole text, its notices, its history id and judgement), which
the pane shows in full under it; the cells hold only what fits their column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from workbench.core.picking.pick_text import PICKED_MARK
from workbench.tui.widgets.translate_rows import (
    JUDGED_WIDTH,
    LOADING,
    MODEL_WIDTH,
    MS_WIDTH,
    QE_WIDTH,
    SOURCE_SHARE,
    WAITING,
    Entry,
    cut,
)

if TYPE_CHECKING:
    from workbench.core.translate.console_session import ConsoleAnswer
    from workbench.core.translate.judgements import Judgement


class TranslationTable(DataTable[str | Text]):
    """Every line translated in this session, newest last, with its time and judgement."""

    def __init__(self, scored: bool, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.scored = scored  # a QE column (tui --qe), kept when QE turns off
        self.entries: dict[str, Entry] = {}  # by row key, in table order

    def on_mount(self) -> None:
        """The columns, sized to the terminal's width."""
        # Fixed shares of the width, so the translation shows at 80 columns; the
        # highlighted row is shown in full below the table.
        width = max(70, self.app.size.width - 4)
        columns = 5 + self.scored
        scores = QE_WIDTH if self.scored else 0
        text = width - MODEL_WIDTH - MS_WIDTH - scores - JUDGED_WIDTH - 2 * columns  # padding
        self.source_width = int(text * SOURCE_SHARE)
        self.translation_width = text - self.source_width
        self.add_column("model", width=MODEL_WIDTH, key="model")
        self.add_column("source", width=self.source_width, key="source")
        self.add_column("translation", width=self.translation_width, key="translation")
        self.add_column("ms", width=MS_WIDTH, key="ms")
        if self.scored:
            self.add_column("QE", width=QE_WIDTH, key="qe")
        self.add_column("judged", width=JUDGED_WIDTH, key="judged")

    @property
    def pending(self) -> int:
        """Rows still waiting for their translation."""
        return sum(1 for e in self.entries.values() if e.line_id is None and not e.failed)

    def add_entry(self, entry: Entry, loading: bool) -> None:
        """A row for a line just sent, highlighted; ``loading``: its model loads first."""
        self.entries[entry.key] = entry
        empty = [""] * (2 + self.scored)  # ms, QE, judged
        waiting = Text(LOADING if loading else WAITING, style="italic")
        self.add_row(
            entry.model, cut(entry.source, self.source_width), waiting, *empty, key=entry.key
        )
        self.move_cursor(row=self.row_count - 1)

    def show_answer(self, key: str, answer: ConsoleAnswer) -> None:
        """Fill the row ``key`` with its translation (marked when picked), time and QE
        score."""
        entry = self.entries.get(key)
        if entry is None:
            return
        item = answer.translation
        entry.translation, entry.notices = item.text, item.notices
        entry.line_id, entry.pick = answer.line_id, answer.pick
        if answer.backend == "ctranslate2":
            self._cell(key, "model", f"{entry.model}/ct2")
        mark = Text("⚠ ", style="yellow") if item.notices else Text()
        if answer.pick is not None:  # picked among candidates, listed under the table
            mark += Text(f"{PICKED_MARK} ", style="bold")
        self._cell(key, "translation", mark + cut(item.text, self.translation_width - len(mark)))
        self._cell(key, "ms", f"{item.seconds * 1000:.0f}")
        if answer.quality is not None and self.scored:
            entry.quality = f"{answer.quality.text()} (no reference)"
            self._cell(key, "qe", f"{answer.quality.score:.1f}")

    def show_failure(self, key: str, error: str) -> bool:
        """Mark the row ``key`` not translated, with why; whether it is still there."""
        entry = self.entries.get(key)
        if entry is None:
            return False
        entry.failed, entry.notices = True, [error]
        self._cell(key, "translation", Text("not translated", style="red"))
        return True

    def show_judgement(self, entry: Entry, judgement: Judgement) -> None:
        """Mark ``entry``'s row with the verdict it was given."""
        entry.judgement = judgement
        self._cell(entry.key, "judged", judgement.verdict)

    def highlighted(self) -> Entry | None:
        """The entry of the highlighted row, or None when the table is empty."""
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0)).row_key.value
        return self.entries.get(str(key))

    def move(self, delta: int) -> None:
        """Move the highlight ``delta`` rows, staying on the table."""
        if self.row_count:
            self.move_cursor(row=max(0, min(self.row_count - 1, self.cursor_row + delta)))

    def forget_rows(self) -> None:
        """Empty the table (the history file keeps every line)."""
        self.clear()
        self.entries.clear()

    def _cell(self, key: str, column: str, value: str | Text) -> None:
        if key in self.rows:  # not cleared (Ctrl-L) while it was translated
            self.update_cell(key, column, value)
