"""Each benchmark's smallest mode, run as its command, so that a broken benchmark shows here.

A benchmark that no test runs rots: a probe that stops matching what the TUI draws, or a
figure a report cannot format, shows only at the end of a measuring run of many minutes.
These tests run each script's
``--smoke`` (or smallest) mode, reports in ``tmp_path``, and check that it ends well and
that every figure was found ("n/a" is what a report prints for a figure it did not
measure). Scripts that import torch run in this process (``run_main``: a fresh interpreter
would spend ~5 s importing it again), the others in a fresh one (``run_benchmark``). The
speed, bootstrap and data-scale benchmarks' runs are in their own test files.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers.benchmarks import BENCHMARKS, run_benchmark, run_main
from tests.helpers.paths import FIXTURES


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


def test_a_figure_gives_its_repetitions_spread_and_more_than_25_percent_is_noise(figures):
    wide = figures.spread([1.0, None, 1.3])  # a repetition that was not measured is left out
    assert (wide.count, wide.low, wide.high) == (2, 1.0, 1.3)
    assert wide.relative == pytest.approx(0.30)  # largest / smallest - 1
    assert wide.noisy
    assert figures.spread_text(wide, ".2f", " s") == "1.00–1.30 s (30%)"
    narrow = figures.spread([1.1, 1.0])
    assert narrow.relative == pytest.approx(0.10)
    assert not narrow.noisy
    assert not figures.spread([1.0, 1.25]).noisy  # 25% exactly is not more than 25%
    assert figures.spread([1.0, 1.2501]).noisy  # just more is
    one = figures.spread([4.2])
    assert (one.relative, one.noisy) == (None, False)
    assert figures.spread_text(one) == "1 repetition: no spread"
    assert figures.spread_text(figures.spread([None])) == "n/a"
    assert figures.spread_share(narrow) == "10%"

    assert figures.noise_warning({"": wide}) == (
        "noisy: repetitions differ by 30% (> 25%); not a result"
    )
    arms = {"reference": narrow, "workbench": wide}
    assert figures.noise_warning(arms) == (
        "noisy: workbench repetitions differ by 30% (> 25%); not a result"
    )
    assert figures.noise_warning({"a": wide, "b": figures.spread([2.0, 3.0])}) == (
        "noisy: a repetitions differ by 30%, b by 50% (> 25%); not a result"
    )
    assert figures.noise_warning({"reference": narrow, "workbench": one}) == ""

    summary = figures.noise_summary({"steps/s": arms, "memory": {"reference": narrow}})
    assert summary.startswith("**Noisy, not results (repetitions differ by more than 25%): ")
    assert "steps/s (workbench 30%)" in summary
    assert "memory" not in summary
    assert figures.noise_summary({"steps/s": {"reference": narrow}}) == (
        "Noise: no figure's repetitions differ by more than 25%."
    )
    assert figures.noise_summary({"steps/s": {"reference": one, "workbench": one}}) == (
        "Noise: 1 repetition per arm: no spread, so no figure here can be told from noise."
    )
    assert len(figures.load_average().split()) == 3


def test_tui_overhead_flags_an_arm_whose_repetitions_differ_by_more_than_25_percent(figures):
    tui = importlib.import_module("tui_overhead")
    load = ("0.20 0.30 0.40", "1.00 0.50 0.40")
    rates = {"headless": [4.0, 3.0], "tui": [3.9, 3.7]}
    lines = tui.report_lines("cmd", 3, rates, [0.78, 0.80, 0.82], False, load)
    text = "\n".join(lines)
    assert "load average (1/5/15 min) before 0.20 0.30 0.40, after 1.00 0.50 0.40" in text
    assert (
        "| headless | 4.000, 3.000 | 3.500 | 3.000–4.000 (33%): "
        "**noisy: headless repetitions differ by 33% (> 25%); not a result** |" in lines
    )
    assert "| tui | 3.900, 3.700 | 3.800 | 3.700–3.900 (5%) |" in lines
    assert "training steps/s (headless 33%)" in text  # in the summary, above the table
    assert "**TUI / headless training throughput" not in text  # not quoted as a result
    assert "TUI / headless training throughput: 1.086, noisy: headless repetitions" in text
    assert "median 0.80 s (spread 0.78–0.82 s (5%))" in text

    quiet = tui.report_lines("cmd", 1, {"headless": [4.0], "tui": [3.9]}, [0.8], False, load)
    assert "| headless | 4.000 | 4.000 | 1 repetition: no spread |" in quiet
    assert "**TUI / headless training throughput: 0.975** (demo preset" in "\n".join(quiet)
    assert "Noise: 1 repetition per arm: no spread" in "\n".join(quiet)


def test_startup_finds_the_first_screen_the_footer_and_the_data(figures, tmp_path: Path):
    """The probes match what the TUI really draws: a probe that stops matching (a footer key
    that moves to the command palette) fails here, not in a 10-minute run."""
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


def test_tui_runs_inflates_a_real_run_and_reports_every_figure(figures, tmp_path: Path):
    tui_runs = importlib.import_module("tui_runs")
    dest = tmp_path / "long"
    tui_runs.inflate(FIXTURES / "tiny_run", dest, 1000)
    lines = (dest / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    steps = [e for e in events if e["event"] == "TrainStep"]
    assert [e["step"] for e in steps] == list(range(1, 1001))
    assert all(e["max_steps"] == 1000 for e in steps)
    # The run's own evaluations stay, each after the steps of its epoch.
    epochs = [e for e in events if e["event"] == "EvalDone" and e["stage"] == "epoch"]
    assert len(epochs) == 6
    assert epochs[-1]["step"] == 1000
    assert [e["event"] for e in events].count("RunDone") == 1
    pane = {"first_frame": 0.5, "list": 0.4, "idle_core": 0.004}
    result = {
        "many": pane,
        "long": pane,
        "report_long": {"seconds": 6.0, "peak_mib": 560.0},
        "report_short": {"seconds": 4.0, "peak_mib": 550.0},
        "report_new": {"seconds": 5.0, "peak_mib": 555.0},
    }
    text = "\n".join(tui_runs.report_lines(result, 50, 1_000_000, 300_000, ("0.1", "0.2")))
    assert "n/a" not in text
    assert "| 0.40 s | ≤ 2 s |" in text
    assert "0.4% of a core" in text
    assert "| 5.00 s, 555 MiB | (loads torch and the model) |" in text


def test_step_measures_compares_each_measure_with_the_step_as_shipped(figures):
    step_measures = importlib.import_module("step_measures")

    def run(seconds: float, losses: list[float]) -> dict:
        parts = {"step": [seconds, seconds], "optimizer": [0.1, 0.1]}
        return {"parts": parts, "first_step": seconds, "losses": losses}

    lines = step_measures.measure_lines(
        {
            "as shipped": [run(2.0, [11.0, 10.9]), run(2.2, [11.0, 10.9])],
            "2 threads": [run(1.05, [11.0, 10.9]), run(1.05, [11.0, 10.9])],
            "torch.compile": [run(2.1, [11.0, 10.95])],
            "loss in chunks": [run(2.0, [11.0, 10.9]), run(3.0, [11.0, 10.9])],
        }
    )
    assert lines[2].startswith("| as shipped | 2.00, 2.20 | 2.00–2.20 (10%) | 1.00× |")
    assert "| 2.00× |" in lines[3]
    assert lines[4].endswith("| 5.0e-02 |")
    assert "2.00–3.00 (50%): **noisy: repetitions differ by 50% (> 25%); not a result**" in lines[5]


def test_quality_decoding_reports_every_cost_and_the_fast_mbrs_agreement(
    figures, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """--quick on the demo's sentences and an untrained demo-shaped model: every row of
    both tables is measured, with its spread, and the quick figures say what they are."""
    out = tmp_path / "QUALITY_DECODING.md"
    run_main("quality_decoding.py", "--quick", "--out", str(out), monkeypatch=monkeypatch)
    text = out.read_text(encoding="utf-8")
    assert "n/a" not in text, text
    assert "**From a --quick run" in text
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert any(r.startswith("| beam search (") and r.endswith("| 1.0 |") for r in rows)
    for name in ("MBR chrF", "MBR BLEU", "QE (tiny CometKiwi)"):
        assert any(r.startswith(f"| pick by {name}: scoring only | ") for r in rows), name
        assert any(r.startswith(f"| pick by {name}: candidates + scoring | ") for r in rows)
    agreement = [r for r in rows if r.split("|")[1].strip() in ("4", "8")]
    assert len(agreement) == 2
    assert all(r.split("|")[6].strip().endswith("/6") for r in agreement)  # same pick of 6
    assert "Candidates generated a second: " in text
