"""A run's held-out sentences with their before/after translations and sentence scores,
``<split>_translations.jsonl``: one :class:`~workbench.core.records.run_records.Sample`
per line, written once "after" is scored and read back by the Samples pane, compare, the
Lab and ``sacrebleu`` itself (its ``after`` and ``reference`` fields reproduce the run's
scores); and beside it, for a run with ``--pick``, ``<split>_picked_translations.jsonl``:
one :class:`~workbench.core.records.picked_scores.PickedSample` per line, a record
for the user to read that no view reads back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from workbench.core.records.files import read_jsonl_counted
from workbench.core.records.picked_scores import PickedSample
from workbench.core.records.run_records import Sample
from workbench.core.records.typed import decode
from workbench.core.run_folder.layout import RunFolder

_Row = TypeVar("_Row", Sample, PickedSample)


def write_translations(run_dir: Path, rows: dict[str, list[Sample]]) -> None:
    """``<split>_translations.jsonl``: one JSON line per sentence of each set."""
    for split, samples in rows.items():
        with RunFolder(run_dir).translations(split).open("w", encoding="utf-8") as fh:
            for row in samples:
                fh.write(json.dumps(vars(row), ensure_ascii=False) + "\n")


def read_translations(
    run_dir: Path, split: str, notes: list[str] | None = None
) -> tuple[list[Sample], int]:
    """A held-out set's sentences with their before/after translations, and how many
    lines did not read (a torn last line of a killed writer, a hand-edited one); each such
    line is said in ``notes``."""
    return _read_lines(Sample, RunFolder(run_dir).translations(split), notes)


def write_picked_translations(run_dir: Path, split: str, rows: list[PickedSample]) -> None:
    """``<split>_picked_translations.jsonl``: each sentence's beam and picked translation."""
    with RunFolder(run_dir).picked_translations(split).open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(vars(row), ensure_ascii=False) + "\n")


def read_picked_translations(
    run_dir: Path, split: str, notes: list[str] | None = None
) -> list[PickedSample]:
    """A set's picked translations beside beam's (empty for a run without ``--pick``);
    a line that does not read is said in ``notes`` and left out."""
    return _read_lines(PickedSample, RunFolder(run_dir).picked_translations(split), notes)[0]


def _read_lines(cls: type[_Row], path: Path, notes: list[str] | None) -> tuple[list[_Row], int]:
    """The records of one JSONL file of ``cls`` rows, and how many lines did not read:
    each line that is not a JSON object, or whose record does not decode, is left out and
    said in ``notes``, so the two readers report a torn line in the same words."""
    records, torn = read_jsonl_counted(path)
    said = notes if notes is not None else []
    rows = []
    for number, record in enumerate(records, 1):
        row = decode(cls, record, said, f"{path.name} line {number}")
        if row is not None:
            rows.append(row)
    if torn:
        said.append(f"{path.name}: {torn} line(s) that are not JSON objects skipped")
    return rows, torn + len(records) - len(rows)
