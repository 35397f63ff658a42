"""Each benchmark's smallest mode, run as its command, so that a broken benchmark shows here.

A benchmark that no test runs rots: the speed benchmark measured for ten minutes and then
died on a start-up figure its footer probe no longer found. These tests run each script's
``--smoke`` (or smallest) mode, reports in ``tmp_path``, and check that it ends well and
that every figure was found ("n/a" is what a report prints for a figure it did not
measure). Scripts that import torch run in this process (``run_main``: a fresh interpreter
would spend ~5 s importing it again), the others in a fresh one (``run_benchmark``). The
speed, bootstrap and data-scale benchmarks' runs are in their own test files.
"""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers.benchmarks import BENCHMARKS, run_benchmark, run_main


@pytest.fixture(scope="module")
def figures():
    sys.path.insert(0, str(BENCHMARKS))  # as each benchmark finds its sibling modules
    return importlib.import_module("figures")


def test_a_missing_figure_prints_as_na_and_smoke_runs_stay_out_of_benchmarks(
    figures, tmp_path: Path
):
    assert figures.figure(None, ".2f", " s") == "n/a"
    assert figures.figure(float("nan"), ".2f") == "n/a"
    assert figures.figure(1.234, ".2f", " s") == "1.23 s"
    assert figures.median([None, 3.0, 1.0]) == 2.0
    assert figures.median([None]) is None
    assert figures.ratio(1.0, 0.0) is None
    assert figures.ratio(None, 2.0) is None
    committed = BENCHMARKS / "RESULTS.md"
    assert figures.report_path(None, committed, smoke=False) == committed
    smoke = figures.report_path(None, committed, smoke=True)
    assert smoke.name == "RESULTS.md"
    assert BENCHMARKS not in smoke.resolve().parents
    smoke.parent.rmdir()  # the fresh temporary folder, still empty
    assert figures.report_path(tmp_path / "R.md", committed, smoke=True) == tmp_path / "R.md"
    with pytest.raises(SystemExit, match="committed figures"):
        figures.report_path(committed, committed, smoke=True)


def test_startup_finds_the_first_screen_the_footer_and_the_data(figures, tmp_path: Path):
    """The probes match what the TUI really draws: a probe that stops matching (the footer's
    "Quit" did, when q moved to the palette) fails here, not in a 10-minute run."""
    out = tmp_path / "STARTUP.md"
    run_benchmark("startup.py", "--smoke", "--out", str(out), cwd=tmp_path)
    text = out.read_text(encoding="utf-8")
    assert "n/a" not in text, text
    assert "footer keys at " in text
    assert "data at " in text
    assert "imported by then: none of torch" in text  # measured: the TUI paints without torch


def test_startup_report_prints_what_was_not_measured_as_na(figures):
    startup = importlib.import_module("startup")
    lines = startup.report_lines({"help_runs": 1, "help_median": 0.2, "paint_all": []})
    assert "| 0.200 s (min n/a, max n/a) |" in lines[0]
    assert "footer keys at n/a, data at n/a" in lines[1]
    assert "imported by then: n/a" in lines[1]


def test_sampling_draws_every_scheme(tmp_path: Path):
    out = tmp_path / "SAMPLING.md"
    run_benchmark("sampling.py", "--smoke", "--out", str(out), cwd=tmp_path)
    text = out.read_text(encoding="utf-8")
    assert "n/a" not in text, text
    assert "| now: new plan, new reader (no read-ahead) |" in text
    assert "**Reading the figures.**" in text


def test_user_mistakes_times_the_answers(tmp_path: Path):
    rows = run_benchmark("user_mistakes.py", "--smoke", cwd=tmp_path).splitlines()
    assert len(rows) == 2
    assert all(row.startswith("| hub unreachable") for row in rows)
    assert all(row.endswith(" s |") for row in rows)


def test_attention_views_score_every_view(
    figures, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
):
    importlib.import_module("attention_views").main(str(tiny_model_dir), pairs=20)
    found = capsys.readouterr().out.splitlines()
    assert " lexicon cases in 20 held-out pairs; chance 0." in found[0]  # some cases found
    views = found[1:]  # the tiny model's 1 layer x 2 heads, the layer's mean, the mean
    assert len(views) == 4
    assert all(view.startswith("layer ") for view in views)
    assert all("n/a" not in view for view in views)


@pytest.mark.skipif(
    importlib.util.find_spec("ctranslate2") is None, reason="ctranslate2 is not installed"
)
def test_ct2_latency_measures_every_arm(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import json

    model = tmp_path / "model"  # the exports go into the model's folder
    shutil.copytree(tiny_model_dir, model, ignore=shutil.ignore_patterns("ct2-*"))
    out = tmp_path / "ct2.json"
    monkeypatch.setenv("CT2_BENCH_SPM", str(model))  # main() sets it for the opus shape
    args = ("--model", str(model), "--smoke", "--json", str(out))
    run_main("ct2_latency.py", *args, monkeypatch=monkeypatch)
    report = json.loads(out.read_text(encoding="utf-8"))
    for part in ("console_latency", "validation_bleu", "opus_shape_latency"):
        rows = report[part]["rows"]
        assert [r["arm"] for r in rows] == ["transformers", "ct2 int8", "ct2 float32"]
        assert all(value is not None for row in rows for value in row.values()), rows
    assert report["validation_bleu"]["pairs"] == 20
