"""Styled lines as Rich ``Text``: the one step between the core's drawings and a terminal.

The core draws heatmaps as lines of ``(text, style)`` segments and imports no terminal
library; the command line and the TUI both show them through :func:`to_rich`, so the two
front ends colour a map the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from workbench.core.attention.heatmap import Line, build_lines


def to_rich(lines: Sequence[Line]) -> Text:
    """Segments as one Rich ``Text`` (an empty style is no style), never wrapped."""
    text = Text(no_wrap=True, overflow="ignore")
    for n, line in enumerate(lines):
        if n:
            text.append("\n")
        for chunk, style in line:
            text.append(chunk, style=style or None)
    return text


def render_rich(row_labels: list[str], col_labels: list[str], matrix: Any, **options: Any) -> Text:
    """The heatmap as a Rich ``Text`` (colour by default), for terminals and the TUI."""
    options.setdefault("colour", True)
    return to_rich(build_lines(row_labels, col_labels, matrix, **options))
