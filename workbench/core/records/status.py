"""A run's status, as a closed set of names that mypy checks at every comparison.

A run *ends* ``finished``, ``stopped`` or ``failed`` (:data:`EndStatus`, what
``summary.json`` and the ``RunDone`` event record). Watched from outside, a run may also
be ``running`` or ``stopping`` while its writer lives, ``killed`` when the writer is gone
without saying how it ended, or ``stale`` when a writer on another host has an old
heartbeat (:data:`RunStatus`, see :mod:`workbench.core.live.liveness`).
"""

from __future__ import annotations

from typing import Literal

EndStatus = Literal["finished", "stopped", "failed"]
#: How a run ended as :func:`~workbench.core.train.run_training.run_training` returns it:
#: one of the endings, or ``lost`` (a sweep's trial whose lease was taken away).
RunOutcome = Literal["finished", "stopped", "failed", "lost"]
RunStatus = Literal["running", "stopping", "finished", "stopped", "failed", "killed", "stale"]

#: The statuses of a run whose writer may still write (a stop request reaches it).
LIVE_STATUSES: tuple[RunStatus, ...] = ("running", "stopping", "stale")
#: The statuses of a run whose writer is known to write: a stale one may be long dead.
WRITING_STATUSES: tuple[RunStatus, ...] = ("running", "stopping")
