"""A benchmark run as its command (a fresh interpreter) or through its ``main()`` here."""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

BENCHMARKS = REPO / "benchmarks"


def report_row(report: str, start: str) -> str:
    """The one line of a benchmark's report that starts with ``start``."""
    found = [line for line in report.splitlines() if line.startswith(start)]
    assert len(found) == 1, f"no single line starting {start!r} in:\n{report}"
    return found[0]


def run_benchmark(script: str, *args: str, cwd: Path, timeout: float = 300) -> str:
    """Run ``benchmarks/<script>`` with ``args`` in a fresh interpreter; its stdout."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        cwd=cwd,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{script} {' '.join(args)} failed:\n{done.stderr[-4000:]}"
    return done.stdout


def run_main(script: str, *args: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Import ``benchmarks/<script>`` and call its ``main()`` with ``args`` as its argv."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # as each benchmark finds its siblings
    module = importlib.import_module(Path(script).stem)
    monkeypatch.setattr(sys, "argv", [str(BENCHMARKS / script), *args])
    assert module.main() in (0, None)


def load_speed():
    sys.path.insert(0, str(REPO / "benchmarks"))  # as benchmarks/speed.py does
    return importlib.import_module("speed_bench")


@pytest.fixture(scope="module")
def speed():
    import torch

    # One thread: on a shared 2-core machine, two threads wait on each other at every
    # one of the toy model's many tiny ops (seconds per test instead of a fraction).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield load_speed()
    torch.set_num_threads(threads)
