"""A command timed in a process group of its own: its seconds, the peak of its processes'
summed memory, and when each of its lines came.

Peak memory is the largest sum over the process group of each process's proportional set
size (``Pss`` in ``/proc/PID/smaps_rollup``), sampled every 0.2 s: forked workers share
pages, which PSS counts once, where adding RSS would count them once per process. Linux
only (``/proc``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from typing import Any


def tree_pss_kib(group: int) -> int:
    """The summed PSS of the processes in process group ``group``."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getpgid(int(entry)) != group:
                continue
            with open(f"/proc/{entry}/smaps_rollup", encoding="ascii") as rollup:
                for line in rollup:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except (OSError, ValueError):
            continue
    return total


def timed(argv: list[str], env: dict[str, str], until: str | None) -> dict[str, Any]:
    """Run ``argv`` in its own process group until it exits (or prints a line starting
    with ``until``, when it is killed): seconds, peak PSS, and when each line came."""
    started = time.perf_counter()
    child = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,
    )
    peak = 0

    def sample() -> None:
        nonlocal peak
        while child.poll() is None:
            peak = max(peak, tree_pss_kib(child.pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    lines: list[tuple[float, str]] = []
    reached = until is None
    assert child.stdout is not None
    for line in child.stdout:
        lines.append((time.perf_counter() - started, line.rstrip()))
        if until is not None and line.strip().startswith(until):
            reached = True
            os.killpg(child.pid, signal.SIGKILL)
            break
    seconds = time.perf_counter() - started
    child.wait()
    sampler.join()
    if not reached or (until is None and child.returncode):
        tail = "\n".join(text for _, text in lines[-15:])
        raise RuntimeError(f"{argv[0]} ended with {child.returncode} before {until!r}:\n{tail}")
    return {"seconds": round(seconds, 1), "peak_mib": round(peak / 1024), "lines": lines}
