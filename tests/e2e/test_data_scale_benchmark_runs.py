"""The data-scale benchmark's parts at toy size: correctness only, never timing.

The tests that train (or build), split from tests/meta/test_data_scale_benchmark.py, whose other
tests do not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_the_smoke_run_reaches_the_first_step_in_every_arm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """``data_scale.py --smoke``: the anchor, then ``workbench train`` cold and cached up
    to its first step, on 1,000 pairs; the report and its JSON in tmp_path."""
    from tests.helpers.benchmarks import run_main

    out = tmp_path / "DATA_SCALE.md"
    args = ("--smoke", "--out", str(out), "--work", str(tmp_path))
    run_main("data_scale.py", *args, monkeypatch=monkeypatch)
    text = out.read_text(encoding="utf-8")
    assert "n/a" not in text, text
    assert "| 1,000 | " in text
    assert "the 50 validation and 30 test pairs" in text
    assert [row["arm"] for row in json.loads(out.with_suffix(".json").read_text())] == [
        "anchor",
        "cold",
        "cached",
    ]
