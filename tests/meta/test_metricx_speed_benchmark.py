"""benchmarks/metricx_speed.py's quick mode runs and reports both arms' figures.

The quick mode scores the tiny fixture checkpoint with the workbench and, where
google-research/metricx's isolated venv exists (``tests/fixtures/metricx/reference_venv.sh``;
not in CI), with that code too. The workbench arm must always be measured; metricx's
figures, the ratio and the largest difference must be there whenever its venv is, and say
"n/a" (not fail) where it is not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.benchmarks import report_row, run_benchmark

REFERENCE_PYTHON = Path("/tmp/metricx-reference-venv/bin/python")


def quick_report(tmp_path: Path, *args: str) -> str:
    """Run ``metricx_speed.py --quick`` with ``args`` as its command; the report it wrote."""
    out = tmp_path / "METRICX_SPEED.md"
    run_benchmark("metricx_speed.py", "--quick", "--out", str(out), *args, cwd=tmp_path)
    return out.read_text(encoding="utf-8")


def assert_workbench_measured(report: str) -> None:
    cells = [c.strip() for c in report_row(report, "| workbench |").strip("|").split("|")]
    assert float(cells[1]) > 0  # scoring seconds
    assert float(cells[3]) > 0  # segments per second
    float(cells[4])  # load seconds: a number


def test_the_quick_run_measures_the_workbench_and_metricx_where_it_is(tmp_path: Path):
    report = quick_report(tmp_path)
    assert_workbench_measured(report)
    reference = report_row(report, "| metricx |")
    speedup = report_row(report, "**Ratio workbench / metricx")  # one repetition: never noisy
    difference = report_row(report, "Largest |workbench − metricx|")
    if REFERENCE_PYTHON.is_file():
        assert "n/a" not in reference, reference
        assert "n/a" not in speedup, speedup
        assert float(difference.split(": ")[1].rstrip(".")) <= 1e-4
    else:
        assert "n/a" in reference
        assert "n/a" in speedup


@pytest.mark.skipif(not REFERENCE_PYTHON.is_file(), reason="the test above is this one in CI")
def test_without_the_reference_venv_the_metricx_arm_is_na(tmp_path: Path):
    report = quick_report(tmp_path, "--reference-python", str(tmp_path / "no-venv" / "python"))
    assert_workbench_measured(report)
    assert "n/a" in report_row(report, "| metricx |")
    assert "n/a" in report_row(report, "**Ratio workbench / metricx")
    assert "n/a" in report_row(report, "Largest |workbench − metricx|")
