"""Cleaning a user's file before the split, as a new user meets it: the run's first lines, what the
run folder records, the report, and the Dataset pane's dropped pairs.

The tests that train (or build), split from tests/unit/test_cleaning.py, whose other tests do
not.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers.cli import TINY_DEMO_ARGS
from tests.helpers.data import PLANTED, write_planted_tsv
from tests.helpers.runs import tiny_toml


def test_a_planted_file_is_counted_rule_by_rule_and_the_report_shows_why(cli, tmp_path: Path):
    write_planted_tsv(tmp_path / "planted.tsv")
    (tmp_path / "tiny.toml").write_text(tiny_toml(epochs=1.0, samples=0), encoding="utf-8")
    result = cli(*TINY_DEMO_ARGS, "--data", "planted.tsv", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "cleaning:" in line)
    total = sum(PLANTED.values())
    assert f"cleaning: {total} of {300 + total} pairs dropped before the split" in lines[at]
    counts = {rule.strip(): int(n) for rule, n in re.findall(r"([a-z ]+) (\d+)", lines[at + 1])}
    assert {rule: n for rule, n in counts.items() if n} == PLANTED, lines[at + 1]
    assert "long not counted" in lines[at + 1]  # the demo's model is built from the data

    run = next((tmp_path / "translation_output" / "runs").iterdir())
    recorded = json.loads((run / "config.json").read_text(encoding="utf-8"))["cleaning"]
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))["cleaning"]
    assert recorded == summary
    assert summary["dropped"] == total
    assert {r: n for r, n in summary["counts"].items() if n} == PLANTED
    dropped = [json.loads(x) for x in (run / "dropped_pairs.jsonl").read_text().splitlines()]
    assert len(dropped) == total
    assert {d["rule"] for d in dropped if d["target"] == ""} == {"empty"}

    report = cli("report", cwd=tmp_path)
    assert report.returncode == 0, report.stderr[-2000:]
    text = (run / "report.md").read_text(encoding="utf-8")
    section = text[text.index("## Data cleaning") :]
    section = section[: section.index("\n## ", 5)]
    assert f"{total} of {300 + total} pairs were dropped" in section
    assert "| copy | the target is a copy of the source | 10 |" in section
    assert "This reference is not Chinese at all." in section  # an example of script
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "<h2>Data cleaning</h2>" in html
    assert "a side is not mostly in" in html
