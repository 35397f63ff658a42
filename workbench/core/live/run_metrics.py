"""A finished run's ``metrics.jsonl`` read whole for its figures: the logged training steps
as columns, every other event as itself.

The report and ``compare`` draw a run's loss curve and average its loss per epoch. A run
of 300,000 logged steps holds 300,000 ``TrainStep`` records; read as event objects they
took 2.2 s and a 253 MiB peak here, as columns 1.3 s and 83 MiB, and the figures only
want three numbers of each. So a
well-formed step record goes straight into three columns (step, epoch, loss), and any
other record, a step record of another shape included, goes through the one typed
reader (:func:`~workbench.core.live.follow.record_event`), which says why a line that
does not read is skipped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.core.events import Event, TrainStep
from workbench.core.live.follow import decoded_records, record_event, skipped_line
from workbench.core.records.scores import finite_or_none

#: Bytes of ``metrics.jsonl`` read at a time.
BLOCK_BYTES = 4 << 20

#: The keys of a step record as the recorder writes it: its event name, its time, its fields.
STEP_KEYS = frozenset({"event", "time", *(f.name for f in dataclasses.fields(TrainStep))})


@dataclass(frozen=True)
class LoggedSteps:
    """The logged training steps' numbers, in the order they were written: a resumed run
    logs the steps since its checkpoint again. NaN stands for a loss or epoch that is
    missing or not a number."""

    step: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    epoch: np.ndarray = field(default_factory=lambda: np.zeros(0))
    loss: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __len__(self) -> int:
        return len(self.step)

    def last_per_step(self) -> LoggedSteps:
        """One row per step, the last one written, in step order."""
        if not len(self):
            return self
        steps, first_from_end = np.unique(self.step[::-1], return_index=True)
        rows = len(self) - 1 - first_from_end
        return LoggedSteps(steps, self.epoch[rows], self.loss[rows])


@dataclass(frozen=True)
class RunMetrics:
    """What ``metrics.jsonl`` holds: the steps as columns, the other events in order."""

    steps: LoggedSteps = field(default_factory=LoggedSteps)
    events: list[Event] = field(default_factory=list)


def read_run_metrics(path: Path, notes: list[str] | None = None) -> RunMetrics:
    """Every event in the whole lines of ``path`` that read (nothing if it is missing);
    each line skipped is said in ``notes``. The file is read a block of lines at a time,
    so a 69 MB log is never in memory whole."""
    columns: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
    events: list[Event] = []
    skipped = notes if notes is not None else []
    for first, lines in _line_blocks(path):
        for i, record, why in decoded_records(lines):
            number = first + i
            if (
                type(record) is dict
                and record.keys() == STEP_KEYS
                and record["event"] == "TrainStep"
            ):
                step, epoch, loss = record["step"], record["epoch"], record["loss"]
            else:
                event, why = (None, why) if why else record_event(record)
                if event is None:
                    skipped.append(skipped_line(path, number, why))
                    continue
                if not isinstance(event, TrainStep):
                    events.append(event)
                    continue
                step, epoch, loss = event.step, event.epoch, event.loss
            if type(step) is not int or not 0 <= step < 2**63:  # an int64
                skipped.append(skipped_line(path, number, f"a step numbered {step!r}"))
                continue
            columns[0].append(step)
            columns[1].append(epoch)
            columns[2].append(loss)
    steps = LoggedSteps(
        np.array(columns[0], dtype=np.int64), _numbers(columns[1]), _numbers(columns[2])
    )
    return RunMetrics(steps, events)


def _line_blocks(path: Path) -> Iterator[tuple[int, list[bytes]]]:
    """``(number of the first line, lines)`` of about :data:`BLOCK_BYTES` each, whole
    lines only: a last line without its newline is still being written, or torn."""
    first = 1
    try:
        with path.open("rb") as fh:
            while lines := fh.readlines(BLOCK_BYTES):
                whole = lines[-1].endswith(b"\n")
                yield first, lines if whole else lines[:-1]
                if not whole:
                    return
                first += len(lines)
    except FileNotFoundError:
        return


def _numbers(values: list[Any]) -> np.ndarray:
    """Floats, NaN for each value that is not a finite number, read as the event readers
    read one (:func:`~workbench.core.records.scores.finite_or_none`: "1.5" is 1.5)."""
    return np.array(  # None converts to NaN
        [v if type(v) is float else finite_or_none(v) for v in values], dtype=np.float64
    )
