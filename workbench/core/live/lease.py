"""A run's lease on its folder: the right to write into it, which its holder can lose.

The one writer of a run folder (:mod:`.writer`) holds it by ``flock`` for a process's
whole life. A sweep's trial needs more: a worker taken for dead (paused, or its heartbeat
late) may see another worker continue the same folder, and two writers in one folder lose
the data of both. So such a run holds a :class:`RunLease` too, and checks it before every
write; once lost, it writes nothing more there. A run without a lease (``workbench
train``, the TUI) always may. The sweep's lease is
:class:`~workbench.core.experiments.sweep.lease.TrialLease`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from workbench.core.events import Event, EventSink


class RunLease(Protocol):
    """The right to write into a run folder, which its holder can lose while it runs."""

    def held(self) -> bool:
        """Whether this process may still write into the run folder (once False, for good)."""
        ...


def holds(lease: RunLease | None) -> bool:
    """May the run write? Always, without a lease (``workbench train``, the TUI)."""
    return lease is None or lease.held()


class LeaseLost(Exception):
    """The run lost its lease (:class:`RunLease`) on ``run_dir``: it writes nothing more
    there. ``step`` is the training step it had reached (None before training)."""

    def __init__(self, run_dir: Path, step: int | None = None) -> None:
        super().__init__(f"the lease on {run_dir} was lost")
        self.run_dir = run_dir
        self.step = step


def check_lease(lease: RunLease | None, run_dir: Path, step: int | None = None) -> None:
    """Raise :class:`LeaseLost` unless the run may still write into ``run_dir``."""
    if not holds(lease):
        raise LeaseLost(run_dir, step)


def while_held(sink: EventSink, lease: RunLease | None) -> EventSink:
    """``sink`` until ``lease`` is lost, then nothing: a run that lost its run folder to
    another writer adds no event to it."""
    if lease is None:
        return sink

    def fenced(event: Event) -> None:
        if holds(lease):
            sink(event)

    return fenced
