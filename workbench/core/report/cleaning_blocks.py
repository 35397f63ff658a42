"""What cleaning dropped before the split, as the report's headings, text and tables.

The counts come from ``summary.json`` (each rule the run applied, zeros too); the
examples, a few per rule, from the run's ``dropped_pairs.jsonl``, so a reader sees what a
rule took and can judge it.
"""

from __future__ import annotations

from workbench.core.data.cleaning import RULE_REASONS
from workbench.core.report.contents import RunReport
from workbench.core.views.blocks import Block, Paragraph, Table
from workbench.core.views.numbers import MISSING, number, percent

#: Examples shown per rule.
EXAMPLES_PER_RULE = 3


def _times(value: object) -> str:
    """``9x``: a length ratio bound as the settings write it."""
    return f"{value:g}x" if isinstance(value, int | float) else MISSING


def cleaning_blocks(report: RunReport) -> list[Block]:
    """The cleaning section's blocks (empty for a run from before cleaning)."""
    record = report.summary.cleaning
    if not record:
        return []
    counts = record.counts
    if not counts:
        return [Paragraph("Cleaning was off for this run (--no-clean): every pair was kept.")]
    long_kept = not record.drop_long and "long" in counts and counts["long"] > 0
    blocks: list[Block] = [
        Paragraph(
            f"Before the split, {number(record.dropped)} of "
            f"{number(record.pairs_in)} pairs were dropped, each by the first rule it "
            f"failed (scripts: at least {percent(record.min_script_share)} of a side's "
            f"letters in its language's script; lengths within "
            f"{_times(record.max_length_ratio)} of each other)."
            + (" Long pairs were counted and kept, truncated in training." if long_kept else ""),
        ),
        Table(
            ["Rule", "What it drops", "Pairs"],
            [
                [
                    rule,
                    RULE_REASONS.get(rule, ""),
                    "not counted" if rule == "long" and not record.long_measured else number(count),
                ]
                for rule, count in counts.items()
            ],
        ),
    ]
    examples = []
    for rule in counts:
        taken = [d for d in report.dropped if d.rule == rule][:EXAMPLES_PER_RULE]
        examples += [[rule, d.source, d.target] for d in taken]
    if examples:
        blocks += [
            Paragraph(
                f"Up to {EXAMPLES_PER_RULE} pairs per rule (all are in dropped_pairs.jsonl):"
            ),
            Table(["Rule", "Source", "Target"], examples),
        ]
    return blocks
