"""A run trained past the references as document blocks (``train --objective best|cpo|dpo``):
what it trained on and which metric ranked it, the test set before → after judged as a
pick is (:mod:`~workbench.core.views.judged_changes`), and the ceiling it reached for.

The ranker chose every training target, so it overrates the tuned model the way a picker
overrates its pick: it is marked ``(used to rank)`` wherever it is shown, its relatives
``(of the ranker's family)``, and the verdict is read on another judge. The ceiling is
the starting model picking by the ranker at decoding time against its own beam search;
how much of that gain the tuned model kept with beam search alone is the objective's
own measure (Finkelstein, Freitag et al., ICLR 2024).
"""

from __future__ import annotations

from pathlib import Path

from workbench.core.picking.picked_text import PICKED_COLUMNS, drawn, how_picked, picked_rows
from workbench.core.records.objective_record import ObjectiveRecord
from workbench.core.records.scores import SetScores
from workbench.core.run_folder.layout import RunFolder
from workbench.core.views.blocks import Block, Code, Heading, Note, Paragraph, Table
from workbench.core.views.judged_changes import lead_reading
from workbench.core.views.numbers import MISSING, number
from workbench.core.views.ranked_text import ROLE, TRAINS_ON, ceiling_lines, ranked_verdict
from workbench.core.views.verdict import marked

#: What the section says of the test set's table.
RANKED_CAPTION = (
    "The metric that ranked the candidates chose what the model was trained on, so it "
    "overrates the tuned model, and so do its relatives: they are marked and never lead "
    "the verdict (the table of before and after above). Before is the starting model, after "
    "the tuned one, both by beam search."
)
#: Where the run's summary holds no ceiling (it is scored after "after", when a run ends).
NO_CEILING = "No ceiling in this run's summary: a run scores it after its test set, when it ends."


def objective_facts(record: ObjectiveRecord) -> list[list[str]]:
    """What the run trained towards, label and value, each only where the run set it."""
    ranker = record.ranker or record.rank_by
    trained = "Best targets trained on" if record.objective == "best" else "Pairs trained on"
    rows = [
        ["Objective", f"{record.objective}: {TRAINS_ON.get(record.objective, record.objective)}"],
        ["Ranked by", f"{marked(ranker, ranker, ROLE)}, --rank-by {record.rank_by}"],
    ]
    if record.candidates is not None:
        how = f", {drawn(record.candidates_from)}" if record.candidates_from else ""
        rows.append(["Candidates a source", f"{record.candidates}{how}"])
    rows += [
        ["Sources ranked", number(record.sources)],
        [trained, number(record.pairs)],
        ["Skipped (no preference to learn)", number(record.skipped)],
    ]
    if record.beta is not None:
        rows.append(["Beta", f"{record.beta:g}"])
    if record.nll_weight is not None:
        rows.append(["NLL weight", f"{record.nll_weight:g}"])
    return rows


def preferences_text(run_dir: Path) -> Paragraph:
    """Where each source's choice is: ``preferences.jsonl``, or why it is not there."""
    path = RunFolder(run_dir).preferences
    if not path.is_file():
        return Paragraph(
            (Code(path.name), " is not in the run folder: the ranking was stopped or failed.")
        )
    return Paragraph(
        (
            "Each source's candidates with their scores, and the chosen and rejected "
            "translations: ",
            Code(path.name),
            " in the run folder.",
        )
    )


def ranked_test_blocks(record: ObjectiveRecord, test: SetScores | None) -> list[Block]:
    """How to read the test set's before → after (the report's main table, which marks
    the ranker and puts the judges first): the verdict's note and its reading."""
    if test is None or record.ranker is None:
        return [Paragraph(f"Test set: {MISSING} (not in the summary).")]
    found = ranked_verdict(test, record.ranker)
    blocks: list[Block] = [Paragraph(f"{test.label}. {RANKED_CAPTION}", style="caption")]
    if found.note:
        blocks.append(Note(found.note))
    reading = lead_reading(test.changes, found)
    if reading:
        blocks.append(Paragraph(reading, style="caption"))
    return blocks


def ceiling_blocks(record: ObjectiveRecord, test: SetScores | None) -> list[Block]:
    """The starting model's pick against its beam search, and the share the tuned model kept."""
    ceiling = record.ceiling
    if ceiling is None:
        return [Paragraph(NO_CEILING)]
    blocks: list[Block] = [
        Paragraph(
            f"Test set ({ceiling.size:,} sentences), the starting model {how_picked(ceiling)}, "
            "against its own beam search: what picking at decoding time gains, which "
            "training on ranked candidates tries to keep with beam search alone.",
            style="caption",
        ),
        Table(["Metric", *PICKED_COLUMNS], picked_rows(ceiling)),
    ]
    if test is not None:
        blocks += [Paragraph(line) for line in ceiling_lines(record, test)]
    return blocks


def objective_blocks(record: ObjectiveRecord, test: SetScores | None, run_dir: Path) -> list[Block]:
    """The whole section: the facts, where the preferences are, the test set, the ceiling."""
    return [
        Table(["", ""], objective_facts(record)),
        preferences_text(run_dir),
        *ranked_test_blocks(record, test),
        Heading("The ceiling: the starting model picking by the ranker", level=3),
        *ceiling_blocks(record, test),
    ]
