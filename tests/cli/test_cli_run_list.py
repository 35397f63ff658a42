"""``workbench runs``: a line per run folder, newest first, or the same as JSON, and a line
saying there are none. What a run's line holds is tested in tests/unit/test_experiments.py."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.runs import three_run_folders


def test_the_command_prints_lines_or_json_and_says_when_there_are_none(cli, tmp_path: Path):
    output = three_run_folders(tmp_path / "out")
    done = cli("runs", "--output-dir", str(output))
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert len(lines) == 4
    assert lines[1].startswith("20260101-120000-demo")
    done = cli("runs", "--output-dir", str(output), "--json")
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert [r["status"] for r in data] == ["killed", "stopped", "finished"]
    assert data[2]["test"]["bleu_after"] == 9.5
    assert data[0]["test"] is None
    done = cli("runs", "--output-dir", str(output / "nothing"))
    assert done.returncode == 0
    assert "no runs under" in done.stdout
