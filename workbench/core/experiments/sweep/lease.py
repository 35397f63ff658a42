"""One writer per run folder: a sweep trial's lease, renewed by its heartbeat.

A worker that is only slow (an overloaded machine, a slow database, a laptop lid shut)
can look dead to the others: its trial is then failed as stale and continued, in the same
run folder, by another worker. Two writers in one folder lose the data of both, so a
worker writes into its trial's folder only while it holds the trial's lease, and the run
stops at its next step, with nothing more written, once it has lost it.

The lease lives in the study, which every worker reaches anyway (the run folders need not
be on a shared disk). Its owner is the running trial whose ``run_dir`` names the folder
(its ``worker`` attribute names the process); its expiry is that trial's last heartbeat
plus the grace period, by the database's clock, as Optuna's ``fail_stale_trials`` reads
it. It is taken over under the study's lock (``coordination.study_lock``): the stale
trial is failed and its retry names the folder in one claim, and a point's second trial
that would share a running trial's folder is a duplicate, never run.

Holding it takes no database call, so the run checks it before every write and at every
training step. The worker counts the lease as its own until one heartbeat interval
before ``grace`` seconds have passed since it *sent* the last heartbeat that the database
took, by this process's monotonic clock. That is safe however long the worker was paused
or the database slow: the database stamps a heartbeat no earlier than it was sent, and
another worker fails the trial only once the stamp is older than the grace period, so
the holder has stopped writing one interval (the time a last write may take) before
anyone can take over. A heartbeat that comes back too late does not renew the lease
(another worker may be taking the trial at that moment), and a lease once lost stays
lost: the worker tells the study its trial was cut short, and the point is continued
from its last complete checkpoint, by whichever worker claims it next.
"""

from __future__ import annotations

import threading
import time
from typing import Any


class TrialLease:
    """A running trial's right to write into its run folder (a
    :class:`~workbench.core.live.lease.RunLease`), renewed every ``interval`` seconds by
    the trial's heartbeat, on a thread of its own."""

    def __init__(self, storage: Any, trial_id: int, interval: int, grace: int) -> None:
        self.storage, self.trial_id = storage, trial_id
        self.interval, self.grace = interval, grace
        self.lost: str | None = None  # why, once lost
        sent = time.monotonic()
        storage.record_heartbeat(trial_id)  # at once: a trial with none is never stale
        self.confirmed = sent  # when the last heartbeat the study took was sent
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True, name="sweep-heartbeat")
        self.thread.start()

    def held(self) -> bool:
        """Whether this worker may still write into the trial's run folder."""
        silent = time.monotonic() - self.confirmed
        if self.lost is None and silent >= self.grace - self.interval:
            self.lost = (
                f"no heartbeat of this worker reached the study for {silent:.0f} s (the "
                "worker was paused, or the machine or the database was too slow), so "
                "another worker may be continuing the trial"
            )
        return self.lost is None

    def _beat(self) -> None:
        while not self.done.wait(self.interval):
            if not self.held():
                return
            sent = time.monotonic()
            try:
                self.storage.record_heartbeat(self.trial_id)
                state = self.storage.get_trial(self.trial_id).state.name
            except Exception:  # a busy database: the next beat may do, if in time
                continue
            if not self.held():  # came back too late to count
                return
            if state != "RUNNING":  # failed as stale by another worker, which may continue it
                self.lost = (
                    f"another worker took the trial for dead (no heartbeat for {self.grace} s) "
                    "and may be continuing it"
                )
                return
            self.confirmed = sent

    def stop(self) -> None:
        """No more heartbeats (the trial is over, or being told so)."""
        self.done.set()
        self.thread.join(timeout=5)
