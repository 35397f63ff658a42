"""Attention pane: the text-mode cross-attention heatmap for the current sentence.

Extraction runs on a worker with the loader and decoding of ``workbench attention``
(:func:`workbench.core.attention.extract.load_attention_model`), so pane and command show the
same translation and the same weights. Changing the layer, head, word merging or the
page of a long sentence's columns only re-renders the stored weights, which is instant.
A sentence sent from another pane (Ctrl-T in Translate, Enter in Samples) leaves the
focus on the heatmap, so its keys work, and show in the footer, at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Static

from workbench.tui.messages import ForwardsWorkerFailures

if TYPE_CHECKING:
    from workbench.core.attention.extract import AttentionModel
    from workbench.core.attention.grid import AttentionMap


class AttentionPane(ForwardsWorkerFailures, Vertical):
    """Which source words each generated word attends to."""

    FOCUS_ORDER = ("Input#attention-input",)  # Escape leaves it for the view keys
    BINDINGS = [
        Binding("/", "focus_input", "Sentence"),
        Binding("]", "layer(1)", "Layer +"),
        Binding("[", "layer(-1)", "Layer -"),
        Binding("h", "head(1)", "Head"),
        Binding("m", "mean", "Mean"),
        Binding("w", "words", "Words"),
        Binding("p", "next_page", "Page"),
    ]

    @dataclass
    class Extracted(Message):
        """Weights for a sentence are ready (posted from the worker)."""

        result: AttentionMap | None
        error: str | None

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model_name = model
        self._loaded: AttentionModel | None = None  # loaded on first use
        self.result: AttentionMap | None = None
        self.layer_index: int | None = None  # None: the default view chosen by the core
        self.head_index: int | None = None  # None: mean over heads
        self.merge_words = False  # pieces, as `workbench attention` without --words
        self.page = 1  # of the source columns, when they do not fit the width
        self.pages = 1

    def compose(self) -> ComposeResult:
        """The sentence field, a status line, and the heatmap in a view that scrolls."""
        yield Input(
            placeholder="Sentence to inspect, Enter to run; ] [ layer · h head · m mean · w words",
            id="attention-input",
        )
        yield Static("", id="attention-status")
        with VerticalScroll(id="attention-view"):
            yield Static(
                Text("Type a sentence above, or press Enter on a row in Samples."),
                id="attention-heatmap",
            )

    def action_focus_input(self) -> None:
        """/: back to the sentence field, to look at another sentence."""
        self.query_one("#attention-input", Input).focus()

    def set_model(self, model: str) -> None:
        """Use another model from the next extraction on."""
        if model != self.model_name:
            self.model_name = model
            self._loaded = None

    def show_sentence(self, sentence: str) -> None:
        """Fill the input with ``sentence`` and extract its attention."""
        self.query_one("#attention-input", Input).value = sentence
        self.extract(sentence)
        # After the app has focused the pane's input: the view keys work at once.
        self.call_after_refresh(self.query_one("#attention-view").focus)

    @on(Input.Submitted, "#attention-input")
    def _submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.extract(event.value)

    @work(thread=True, exclusive=True, exit_on_error=False, group="attention")
    def extract(self, sentence: str) -> None:
        """Load the model (once) and extract the weights, as ``workbench attention`` does."""
        from workbench.core.attention.extract import load_attention_model
        from workbench.errors import WorkbenchError

        try:
            if self._loaded is None or self._loaded.name != self.model_name:
                self._loaded = load_attention_model(self.model_name)
            result = self._loaded.map(sentence)
        except WorkbenchError as err:
            self.post_message(self.Extracted(None, str(err)))
            return
        self.post_message(self.Extracted(result, None))

    @on(Extracted)
    def _extracted(self, message: Extracted) -> None:
        if message.error:
            self.query_one("#attention-status", Static).update(Text(message.error, style="red"))
            return
        self.result = message.result
        self.page = 1
        self.render_view()

    def render_view(self) -> None:
        """Draw the stored weights with the current layer/head/words choice."""
        from workbench.core.attention.grid import CROSS_ATTENTION
        from workbench.core.attention.heatmap import plan
        from workbench.terminal import render_rich

        if self.result is None:
            return
        rows, cols, matrix, title = self.result.view(
            layer=self.layer_index, head=self.head_index, words=self.merge_words
        )
        if self.result.kind != CROSS_ATTENTION:  # a decoder-only model's: say what it is
            title = f"{self.result.kind} · {title}"
        width = max(40, self.size.width - 2)
        self.pages = len(plan(rows, cols, width).pages)
        self.page = min(self.page, self.pages)
        paging = f" · p: page {self.page % self.pages + 1}/{self.pages}" if self.pages > 1 else ""
        self.query_one("#attention-status", Static).update(
            Text(f"{title} · translation: {self.result.translation}{paging}")
        )
        self.query_one("#attention-heatmap", Static).update(
            render_rich(
                rows,
                cols,
                matrix,
                width=width,
                page=self.page if self.pages > 1 else None,
                axes=self.result.axes,
            )
        )
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The page key only where there is another page to show."""
        return self.pages > 1 if action == "next_page" else True

    def action_next_page(self) -> None:
        """The next page of a long sentence's source columns (after the last, the first)."""
        self.page = self.page % self.pages + 1
        self.render_view()

    def action_layer(self, delta: int) -> None:
        """] and [: the next or previous decoder layer (from the default view's at first)."""
        if self.result is None:
            return
        layers = self.result.num_layers
        current = self.layer_index if self.layer_index is not None else self.result.default_layer
        self.layer_index = (current + delta) % layers
        self.render_view()

    def action_head(self, delta: int) -> None:
        """h: the next head (the first, after the mean over heads)."""
        if self.result is None:
            return
        heads = self.result.num_heads
        self.head_index = 0 if self.head_index is None else (self.head_index + delta) % heads
        self.render_view()

    def action_mean(self) -> None:
        """m: back to the mean over all heads."""
        self.head_index = None
        self.render_view()

    def action_words(self) -> None:
        """w: merge SentencePiece pieces into whole words, or split them again."""
        self.merge_words = not self.merge_words
        self.render_view()
