"""``workbench report`` refused in one line: no run to report on, a folder that does not
exist or holds no summary. The reports themselves are tested in tests/unit/test_report.py
and, on trained runs, tests/e2e/test_report_runs.py."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["report"], "no finished run under translation_output/runs; train one first"),
        (["report", "nowhere"], "run folder nowhere does not exist"),
    ],
)
def test_cli_errors_are_one_line(cli, tmp_path: Path, argv, message):
    done = cli(*argv, cwd=tmp_path)
    assert done.returncode == 2
    err = done.stderr
    assert message in err
    assert err.count("\n") == 1


def test_cli_folder_without_summary_is_refused(cli, tmp_path: Path):
    (tmp_path / "run").mkdir()
    done = cli("report", str(tmp_path / "run"))
    assert done.returncode == 2
    assert "has no summary.json" in done.stderr
