"""``train --metricx PATH``: a demo run scored with a MetricX model (the tiny fixture
checkpoint, offline) prints MetricX before and after with an interval and the paired
t-test COMET gets, says lower is better on every line, gives no agreement reading, and
``runs``, ``report`` and ``compare`` show it where they show COMET.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from scipy.stats import ttest_rel
from textual.widgets import Static

from tests.helpers.cli import CommandLine
from tests.helpers.paths import FIXTURES
from tests.helpers.runs import tiny_toml
from workbench.core.metricx.scorer import MetricXSettings, load_metricx
from workbench.core.run_folder.summary_file import read_summary

TOKENIZER = FIXTURES / "metricx" / "tokenizer"


@dataclass
class MetricXRuns:
    """Two finished runs scored with MetricX in one output folder (one and two epochs),
    the model they were scored with, and what the first printed."""

    out: Path
    runs: list[Path]
    model: Path
    first: str


@pytest.fixture(scope="module")
def metricx_runs(tmp_path_factory: pytest.TempPathFactory, metricx_models) -> MetricXRuns:
    """Trained once for the module and read by its tests (only the report test writes
    into them: its report.md)."""
    folder = tmp_path_factory.mktemp("metricx_runs")
    out, model = folder / "out", metricx_models["tiny-fp32"]
    printed = []
    for epochs in (1, 2):
        toml = folder / "tiny.toml"
        toml.write_text(tiny_toml(epochs=epochs), encoding="utf-8")
        with pytest.MonkeyPatch.context() as patch:
            done = CommandLine(patch)(
                "train", "--headless", "--preset", "demo", "--config", str(toml),
                "--output-dir", str(out), "--metricx", str(model),
                "--metricx-tokenizer", str(TOKENIZER),
                env={"WORKBENCH_CACHE": str(folder / "cache")},
            )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        printed.append(done.stdout)
    runs = sorted((out / "runs").iterdir())
    assert len(runs) == 2
    return MetricXRuns(out, runs, model, printed[0])


def test_the_run_prints_metricx_lower_is_better_with_interval_and_paired_test(metricx_runs):
    stdout = metricx_runs.first
    lines = re.findall(r"\n    (MetricX-24 \(.*)", stdout)
    assert len(lines) == 2, stdout[-3000:]  # the test set's and the validation set's
    assert all(
        re.fullmatch(
            rf"MetricX-24 \({re.escape(str(metricx_runs.model))}; lower is better\) "
            r"\d+\.\d\d → \d+\.\d\d \([+-]\d+\.\d\d, 95% CI [+-]\d+\.\d\d…[+-]\d+\.\d\d, "
            r"paired t-test p [=<] [\d.]+\)",
            line,
        )
        for line in lines
    ), lines
    # The scorer's size came with the memory plan, before any weight was loaded.
    plan = re.search(
        r"\n    MetricX-24 .*: [\d,]+ parameters \(encoder mT5\), about .* in fp32", stdout
    )
    assert plan, stdout[:3000]
    assert stdout.index(plan.group(0)) < stdout.index("[model]")
    humans = re.findall(r"what humans would say.*", stdout)
    assert humans, stdout[-3000:]
    assert not any("MetricX" in line for line in humans)  # no curve of its own, none borrowed


def test_each_sentence_holds_its_metricx_and_the_summary_its_paired_test(metricx_runs):
    run = metricx_runs.runs[0]
    summary = read_summary(run)
    assert summary is not None
    assert summary.test is not None
    assert summary.validation is not None
    metricx = summary.test.metricx
    assert metricx is not None
    assert summary.validation.metricx is not None
    assert metricx.model == str(metricx_runs.model)
    assert metricx.lower_is_better
    rows = [json.loads(line) for line in (run / "test_translations.jsonl").open()]
    scorer = load_metricx(MetricXSettings(str(metricx_runs.model), str(TOKENIZER), device="cpu"))
    sources, references = [r["source"] for r in rows], [r["reference"] for r in rows]
    for side in ("before", "after"):
        again = scorer.score(sources, [r[side] for r in rows], references)
        assert [r[f"metricx_{side}"] for r in rows] == pytest.approx(again, abs=1e-4)
    before, after = [r["metricx_before"] for r in rows], [r["metricx_after"] for r in rows]
    assert metricx.p == pytest.approx(ttest_rel(after, before).pvalue, abs=2e-6)
    assert metricx.after == pytest.approx(sum(after) / len(after), abs=0.006)
    assert metricx.delta == pytest.approx(metricx.after - metricx.before, abs=0.011)


def test_runs_lists_metricx(cli, metricx_runs):
    listing = cli("runs", "--output-dir", str(metricx_runs.out))
    assert listing.returncode == 0, listing.stderr
    assert "test COMET and MetricX (lower is better)" in listing.stdout
    rows = [
        line
        for line in listing.stdout.splitlines()
        if " test MetricX-24 (lower is better) " in line
    ]
    assert len(rows) == 2, listing.stdout


def test_report_shows_metricx_where_it_shows_comet(cli, metricx_runs):
    run = metricx_runs.runs[1]
    reported = cli("report", str(run))
    assert reported.returncode == 0, reported.stderr
    report = (run / "report.md").read_text(encoding="utf-8")
    label = f"MetricX-24 ({metricx_runs.model}; lower is better)"
    assert f"| {label} before → after, test" in report
    assert f"| {label} before → after, validation" in report
    assert "MetricX's (0-25, lower is better) intervals" in report


def test_compare_pairs_metricx_on_the_stored_sentence_scores(cli, metricx_runs, tmp_path: Path):
    runs = metricx_runs.runs
    compared = cli(
        "compare", runs[0].name, runs[1].name, "--output-dir", str(metricx_runs.out),
        "--out", str(tmp_path),
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    (row,) = [  # the metrics table's row (the runs' own lines name MetricX too)
        line
        for line in compared.stdout.splitlines()
        if " MetricX-24 (" in line and "t-test p" in line
    ]
    assert row.lstrip().startswith("B ")
    assert "lower is better" in row
    stored = [
        [json.loads(line)["metricx_after"] for line in (run / "test_translations.jsonl").open()]
        for run in runs
    ]
    p = ttest_rel(stored[1], stored[0]).pvalue
    assert re.search(r"t-test p [=<] ([\d.]+)", row), row
    shown = re.search(r"t-test p = ([\d.]+)", row)
    if shown:  # "p < 0.001" says no more than that
        assert float(shown.group(1)) == pytest.approx(p, abs=0.0051)


async def test_the_samples_pane_says_metricx_is_lower_is_better(metricx_runs):
    from tests.helpers.runs import small
    from tests.helpers.tui import samples_shown
    from workbench.tui.app import WorkbenchApp

    out = metricx_runs.out
    app = WorkbenchApp(small(out.parent, name="out"))
    async with app.run_test(size=(100, 30)) as pilot:
        samples = await samples_shown(pilot, app)
        summary = str(samples.query_one("#samples-summary", Static).render())
        assert "  MetricX-24 (lower is better) " in summary
        assert "paired t-test p" in summary
