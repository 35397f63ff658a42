"""The speed benchmark's code paths at toy size: correctness only, never timing.

The tests that train (or build), split from tests/meta/test_speed_benchmark.py, whose other
tests do not.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest


def test_the_smoke_run_goes_through_every_phase_and_writes_the_report(
    speed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """``speed.py --smoke``: every phase at toy size (the matmul in a fresh process, as
    every phase of a measuring run), then RESULTS.md; every figure found."""
    from tests.helpers.benchmarks import run_main

    out = tmp_path / "RESULTS.md"
    run_main("speed.py", "--smoke", "--device", "cpu", "--out", str(out), monkeypatch=monkeypatch)
    text = out.read_text(encoding="utf-8")
    assert "n/a" not in text, text
    assert "Command: `python benchmarks/speed.py --smoke` (smoke mode;" in text
    assert "| training samples/s |" in text
    assert "| evaluation during training" in text
    assert "(source/target, first repetition): reference 128/128; workbench " in text
    # The reference projects every padded position, the workbench only the real tokens.
    projected = re.search(r"reference 2,048, workbench ([\d,]+); real target tokens ([\d,]+)", text)
    assert projected, text
    assert projected[1] == projected[2]
    difference = re.search(r"Largest per-step difference: \*\*([\d.e+-]+)\*\*", text)
    assert difference, text
    assert float(difference[1]) < 1e-4
    for section in ("## Same loss", "## The data", speed.GPU_NONE[0]):
        assert section in text
