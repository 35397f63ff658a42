"""Each benchmark's smallest mode, run as its command, so that a broken benchmark shows here.

The tests that train (or build), split from tests/meta/test_benchmark_smoke.py, whose other
tests do not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.benchmarks import run_main


def test_tui_overhead_trains_in_both_arms_and_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    out = tmp_path / "TUI.md"
    run_main("tui_overhead.py", "--smoke", "--out", str(out), monkeypatch=monkeypatch)
    text = out.read_text(encoding="utf-8")
    assert "n/a" not in text, text
    assert "| headless |" in text
    assert "| tui |" in text
    assert "**TUI / headless training throughput: " in text
