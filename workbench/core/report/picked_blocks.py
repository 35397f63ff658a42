"""A run's pick against beam search as document blocks (``train --pick``): how the test
set was picked, every metric beam → picked with the judges first and each mark, what the
verdict lacks, and the Kocmi reading on the lead judge. The report shows them for its run,
compare for each run that picked, so both say the same thing the same way.
"""

from __future__ import annotations

from workbench.core.picking.picked_text import (
    PICKED_COLUMNS,
    how_picked,
    picked_reading,
    picked_rows,
    picked_verdict,
)
from workbench.core.records.picked_scores import PickedScores
from workbench.core.views.blocks import Block, Note, Paragraph, Table

#: What the section says before its table.
PICKED_CAPTION = (
    "Beam search's translations are the run's \"after\", unchanged; the picked ones are a "
    "second decoding of the same best model. The metric that picked, and its relatives, "
    "overrate what it picked, so they are marked and never lead the verdict."
)


def picked_blocks(scores: PickedScores) -> list[Block]:
    """The pick's caption, its table (beam search as the baseline), and its verdict."""
    found = picked_verdict(scores)
    blocks: list[Block] = [
        Paragraph(f"Test set ({scores.size:,} sentences), {how_picked(scores)}. {PICKED_CAPTION}"),
        Table(["Metric", *PICKED_COLUMNS], picked_rows(scores)),
    ]
    if found.note:
        blocks.append(Note(found.note))
    reading = picked_reading(scores)
    if reading:
        blocks.append(Paragraph(reading, style="caption"))
    return blocks
