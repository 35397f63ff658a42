"""The heatmap's text form (core.attention.heatmap): CJK alignment, pages, colour and plain."""

from __future__ import annotations

import re

import numpy as np
import pytest
from rich.cells import cell_len

from tests.helpers.paths import EXPECTED
from workbench.core.attention.heatmap import PALETTE, render_plain
from workbench.errors import WorkbenchError
from workbench.terminal import render_rich

HEATMAP = EXPECTED / "attention_heatmap_zh_en.txt"


ROWS = ["我", "喜欢", "喝", "茶", "。", "</s>"]
COLS = ["I", "like", "to", "drink", "tea", ".", "</s>"]
MATRIX = np.array(
    [
        [0.70, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05],
        [0.05, 0.60, 0.10, 0.10, 0.05, 0.05, 0.05],
        [0.02, 0.08, 0.20, 0.55, 0.10, 0.02, 0.03],
        [0.02, 0.03, 0.05, 0.10, 0.75, 0.02, 0.03],
        [0.01, 0.01, 0.01, 0.01, 0.06, 0.80, 0.10],
        [0.10, 0.10, 0.10, 0.10, 0.10, 0.10, 0.40],
    ]
)


def _cell_offset(line: str, index: int) -> int:
    return cell_len(line[:index])


def test_rendering_matches_the_stored_expectation():
    assert render_plain(ROWS, COLS, MATRIX, width=80) == HEATMAP.read_text(encoding="utf-8")


def test_rendered_columns_align_for_chinese_and_english_labels():
    rows = ["我", "喜欢", "喝", "茶", "。", "</s>"]
    cols = ["我们", "I", "like", "喝茶", "tea", "."]
    matrix = np.eye(6)[[1, 2, 3, 4, 5, 0]] * 0.5 + 0.5 / 6
    lines = render_plain(rows, cols, matrix, width=80).splitlines()
    header = lines[0]
    starts = [_cell_offset(header, m.start()) for m in re.finditer(r"\S+", header)]
    assert len(starts) == len(cols)
    for i, line in enumerate(lines[1:7]):
        strongest = int(matrix[i].argmax())
        # The bracket sits right before the cells under the strongest column's label.
        assert _cell_offset(line, line.index("[")) + 1 == starts[strongest], line
        assert _cell_offset(line, line.index("]")) == starts[strongest] + max(
            3, cell_len(cols[strongest])
        ), line


def test_wide_input_is_paged_not_wrapped():
    cols = [f"word{i}" for i in range(30)] + ["喝茶"]
    matrix = np.full((len(ROWS), len(cols)), 1 / len(cols))
    text = render_plain(ROWS, cols, matrix, width=60)
    assert all(cell_len(line) <= 60 for line in text.splitlines())
    assert "page 1/" in text
    assert "source tokens 1–" in text
    for label in cols:
        assert re.search(rf"(?<!\S){re.escape(label)}(?!\S)", text), label
    with pytest.raises(WorkbenchError, match="page 99 does not exist"):
        render_plain(ROWS, cols, matrix, width=60, page=99)


def test_colour_and_plain_share_one_layout():
    coloured = render_rich(ROWS, COLS, MATRIX, width=80, colour=True)
    assert {str(span.style) for span in coloured.spans} >= set(PALETTE[1:])
    plain = render_rich(ROWS, COLS, MATRIX, width=80, colour=False)
    assert not any(str(span.style).startswith("#") for span in plain.spans)
    assert coloured.plain == plain.plain  # colour is added on top of the same characters
    assert "\n".join(line.rstrip() for line in plain.plain.splitlines()) + "\n" == (
        render_plain(ROWS, COLS, MATRIX, width=80)
    )


def test_text_and_svg_colour_a_cell_by_the_same_band():
    """One scale and one palette: a cell's SVG fill is its shade's colour in the terminal."""
    import xml.etree.ElementTree as ET

    from workbench.core.attention.figures import heatmap_svg
    from workbench.core.attention.heatmap import FIGURE_BASE, THRESHOLDS, band_labels, level

    values = [0.01, 0.05, 0.2, 0.4, 0.9]  # one per band, weakest to strongest
    assert [level(v) for v in values] == [0, 1, 2, 3, 4]
    assert band_labels() == ["<5", "5–15", "15–30", "30–50", "50+"]
    assert len(THRESHOLDS) == len(PALETTE) - 1
    svg = ET.fromstring(heatmap_svg(["茶"], [f"s{i}" for i in range(5)], [values], title="t"))
    cells = [
        r
        for r in svg.iter("{http://www.w3.org/2000/svg}rect")
        if r.find("{http://www.w3.org/2000/svg}title") is not None
    ]
    assert [c.get("fill") for c in cells] == [FIGURE_BASE, *PALETTE[1:]]
    # The terminal draws the same bands in the same colours (level 0 is dim there).
    text = render_rich(["茶"], [f"s{i}" for i in range(5)], np.array([values]), width=80)
    styles = {str(span.style) for span in text.spans}
    assert set(PALETTE[1:]) <= styles
    # The max of the matrix does not rescale anything: halving every value changes bands.
    # A fixed scale: the largest cell is not stretched to the top colour.
    top = ET.fromstring(heatmap_svg(["茶"], ["a", "b"], [[0.45, 0.1]], title="t"))
    fills = [
        r.get("fill")
        for r in top.iter("{http://www.w3.org/2000/svg}rect")
        if r.find("{http://www.w3.org/2000/svg}title") is not None
    ]
    assert fills == [PALETTE[3], PALETTE[1]]
