"""benchmarks/comet_speed.py's smoke mode runs and reports both arms' figures.

The smoke mode scores the tiny fixture model with the workbench and, where unbabel-comet's
isolated venv exists (``tests/fixtures/comet/reference_venv.sh``; not in CI), with the
library too. The workbench arm must always be measured; the library's figures and the
ratio must be there whenever its venv is, and say "n/a" (not fail) where it is not.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.benchmarks import report_row
from tests.helpers.paths import REPO

SCRIPT = REPO / "benchmarks" / "comet_speed.py"
REFERENCE_PYTHON = Path("/tmp/comet-reference-venv/bin/python")


def smoke_report(tmp_path: Path, *args: str) -> str:
    """Run ``comet_speed.py --smoke`` with ``args``; the report it wrote."""
    out = tmp_path / "COMET_SPEED.md"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke", "--out", str(out), *args],
        cwd=tmp_path,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, f"comet_speed.py --smoke failed:\n{done.stderr[-4000:]}"
    return out.read_text(encoding="utf-8")


def assert_workbench_measured(report: str) -> None:
    workbench = report_row(report, "| workbench |")
    assert "n/a" not in workbench, workbench
    cells = [c.strip() for c in workbench.strip("|").split("|")]
    float(cells[1])  # scoring seconds: a number
    assert float(cells[2]) > 0  # segments per second


def test_the_smoke_run_measures_the_workbench_and_the_library_where_it_is(tmp_path: Path):
    report = smoke_report(tmp_path)
    assert_workbench_measured(report)
    library = report_row(report, "| unbabel-comet 2.2.7 |")
    speedup = report_row(report, "**Ratio workbench / library")
    difference = report_row(report, "Largest |workbench − library|")
    if REFERENCE_PYTHON.is_file():
        assert "n/a" not in library, library
        assert "n/a" not in speedup, speedup
        assert "n/a" not in difference, difference
    else:
        assert "n/a" in library
        assert "n/a" in speedup


@pytest.mark.skipif(not REFERENCE_PYTHON.is_file(), reason="the test above is this one in CI")
def test_without_the_reference_venv_the_library_arm_is_na(tmp_path: Path):
    report = smoke_report(tmp_path, "--reference-python", str(tmp_path / "no-venv" / "python"))
    assert_workbench_measured(report)
    assert "n/a" in report_row(report, "| unbabel-comet 2.2.7 |")
    assert "n/a" in report_row(report, "**Ratio workbench / library")


def test_a_noisy_scoring_time_is_flagged_and_not_quoted_as_the_ratio(tmp_path: Path):
    sys.path.insert(0, str(REPO / "benchmarks"))  # as comet_speed.py finds its siblings
    from comet_speed_report import write_report

    def run(seconds: float, load: float) -> dict:
        return dict(seconds=seconds, load_s=load, import_s=1.0, warmup_s=0.5, cpu_seconds=2.0)

    runs = {"workbench": [run(1.0, 2.0), run(1.4, 2.1)], "library": [run(2.0, 3.0)]}
    context = dict(
        segments=10, difference=None, smoke=True, command="c", wall=60, date="d",
        model={"path": "p", "what": "w"}, segments_what="s", batch_size=16, threads=1,
        order="o", cpu="c", cores=2, load_before="0.1", load_after="0.2", reference_python="p",
    )  # fmt: skip
    report = write_report(tmp_path / "COMET_SPEED.md", runs, context)
    workbench = report_row(report, "| workbench |")
    assert workbench.endswith(
        "| 1.00, 1.40 (40%): **noisy: workbench repetitions differ by 40% (> 25%); not a "
        "result** | 2.00, 2.10 (5%) |"
    )
    assert report_row(report, "| unbabel-comet 2.2.7 |").endswith(
        "| 2.00 (1 repetition: no spread) | 3.00 (1 repetition: no spread) |"
    )
    assert "**Ratio" not in report
    assert "Ratio workbench / library (segments per second): 1.67×, noisy: workbench " in report
    assert report_row(report, "**Noisy, not results").startswith(
        "**Noisy, not results (repetitions differ by more than 25%): scoring (workbench 40%).**"
    )
