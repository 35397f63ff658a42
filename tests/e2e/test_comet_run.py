"""``train --comet PATH``: a demo run scored with a COMET model (the tiny fixture model,
offline) prints COMET before and after with an interval, a p-value and what humans would
say, and every front end shows it: ``runs``, ``compare`` (paired on the stored sentence
scores), ``report`` and the Samples pane. Without ``--comet`` the test line is the demo's
headline alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from scipy.stats import ttest_rel
from textual.widgets import DataTable, Static

from tests.helpers.cli import CommandLine
from tests.helpers.paths import FIXTURES
from tests.helpers.runs import small, tiny_toml
from tests.helpers.tui import wait_for
from workbench.core.comet.scorer import load_scorer
from workbench.core.run_folder.summary_file import read_summary
from workbench.core.views.event_text import EventText
from workbench.core.views.score_text import headline

COMET_FIXTURES = FIXTURES / "comet"
COMET = COMET_FIXTURES / "regression-mix-sparsemax"


def train(folder: Path, out: Path, *extra: str) -> str:
    """A tiny demo run of 2 epochs through the CLI with ``--comet``, with a cache of its own
    (a module fixture is set up before the autouse private cache); its stdout."""
    toml = folder / "tiny.toml"
    toml.write_text(tiny_toml(epochs=2), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        done = CommandLine(patch)(
            "train", "--headless", "--preset", "demo", "--config", str(toml),
            "--output-dir", str(out), "--comet", str(COMET), *extra,
            env={"WORKBENCH_CACHE": str(folder / "cache")},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@dataclass
class CometRuns:
    """Two finished runs with COMET in one output folder: the first a tiny demo run of two
    epochs, the second one epoch longer and choosing its best epoch by validation COMET
    (``--select-on comet``); what each printed."""

    out: Path
    runs: list[Path]
    first: str
    second: str


@pytest.fixture(scope="module")
def comet_runs(tmp_path_factory: pytest.TempPathFactory) -> CometRuns:
    """Trained once for the module, and read by its tests: only the report test writes into
    them (its report.md), and nothing changes what a run recorded."""
    folder = tmp_path_factory.mktemp("comet_runs")
    out = folder / "out"
    first = train(folder, out)
    second = train(folder, out, "--epochs", "3", "--select-on", "comet")
    runs = sorted((out / "runs").iterdir())
    assert len(runs) == 2
    return CometRuns(out, runs, first, second)


def test_the_run_prints_comet_with_interval_p_value_and_human_reading(comet_runs):
    stdout = comet_runs.first
    test = re.search(
        r"\n  test \(.*\n    95% CI.*\n    (.*)\n    (COMET .*)\n    (what humans.*)\n", stdout
    )
    assert test, stdout[-3000:]
    sacrebleu, comet, humans = test.groups()
    assert sacrebleu.startswith("chrF++ ")
    assert " · TER (lower is better) " in sacrebleu
    assert re.fullmatch(
        rf"COMET \({re.escape(str(COMET))}\) -?\d+\.\d\d → -?\d+\.\d\d "
        r"\([+-]\d+\.\d\d, 95% CI [+-]\d+\.\d\d…[+-]\d+\.\d\d, paired t-test p [=<] [\d.]+\)",
        comet,
    ), comet
    assert "COMET " in humans
    assert "(read on COMET-22's curve: this COMET model has none" in humans  # and says so
    # The scorer's size came with the memory plan, before any weight was loaded.
    plan = re.search(r"COMET .*: ([\d,]+) parameters \(encoder \.\./encoder\)", stdout)
    assert plan, stdout
    assert stdout.index(plan.group(0)) < stdout.index("[model]")
    network = load_scorer(str(COMET), device="cpu").network
    assert int(plan.group(1).replace(",", "")) == sum(p.numel() for p in network.parameters())


def test_each_sentence_holds_its_comet_and_the_summary_its_paired_test(comet_runs):
    runs = comet_runs.runs
    summary = read_summary(runs[0])
    assert summary is not None
    assert summary.test is not None
    assert summary.validation is not None
    comet = summary.test.comet
    assert comet is not None
    assert comet.model == str(COMET)
    assert summary.validation.comet is not None
    rows = [json.loads(line) for line in (runs[0] / "test_translations.jsonl").open()]
    scorer = load_scorer(str(COMET), device="cpu")
    sources, references = [r["source"] for r in rows], [r["reference"] for r in rows]
    for side in ("before", "after"):
        again = scorer.score(sources, [r[side] for r in rows], references)
        stored = [r[f"comet_{side}"] for r in rows]
        assert stored == pytest.approx([100 * s for s in again], abs=1e-3)
    before, after = [r["comet_before"] for r in rows], [r["comet_after"] for r in rows]
    assert comet.p == pytest.approx(ttest_rel(after, before).pvalue, abs=2e-6)
    assert comet.before == pytest.approx(sum(before) / len(before), abs=0.006)
    assert comet.after == pytest.approx(sum(after) / len(after), abs=0.006)


def test_runs_compare_and_report_show_comet(cli, comet_runs, tmp_path: Path):
    out, runs = comet_runs.out, comet_runs.runs
    listing = cli("runs", "--output-dir", str(out))
    assert listing.returncode == 0, listing.stderr
    rows = [line for line in listing.stdout.splitlines() if line.startswith(runs[0].name[:8])]
    assert len(rows) == 2
    assert all(" test COMET " in row and "(humans agree " in row for row in rows)
    compared = cli(
        "compare", runs[0].name, runs[1].name, "--output-dir", str(out), "--out", str(tmp_path)
    )
    assert compared.returncode == 0, compared.stderr
    row = next(line for line in compared.stdout.splitlines() if " COMET (" in line)
    assert row.lstrip().startswith("B ")
    assert "t-test p" in row
    assert "humans agree" in row
    reported = cli("report", str(runs[1]))
    assert reported.returncode == 0, reported.stderr
    report = (runs[1] / "report.md").read_text(encoding="utf-8")
    assert f"| COMET ({COMET}) before → after, test" in report
    assert "| What humans would say (Kocmi et al. 2024) | BLEU " in report
    assert "| TER (lower is better) |" in report


def test_without_comet_the_test_line_is_the_headline_alone(finished_run):
    """The demo's test line is its BLEU and chrF headline (the chrF++ and TER line and the
    human reading follow it), and no COMET line appears."""
    done = [e for e in finished_run.events if type(e).__name__ == "RunDone"][-1]
    lines = EventText().lines(done)
    test = done.summary.test
    assert test is not None
    at = lines.index(f"  {headline(test)}")
    assert re.fullmatch(
        r"  test \(10% held out, seed 42, [\d,]+\): BLEU \d+\.\d\d → \d+\.\d\d \([+-]\d+\.\d\d, "
        r"95% CI [+-]\d+\.\d\d…[+-]\d+\.\d\d, p [=<] [\d.]+\) · chrF \d+\.\d\d → \d+\.\d\d "
        r"\([+-]\d+\.\d\d, 95% CI [+-]\d+\.\d\d…[+-]\d+\.\d\d, p [=<] [\d.]+\)",
        lines[at],
    ), lines[at]
    assert lines[at + 2].startswith("    chrF++ ")
    assert lines[at + 3].startswith("    what humans would say (Kocmi et al. 2024): BLEU ")
    assert not any("COMET" in line for line in lines)


async def test_the_samples_pane_shows_and_orders_by_each_sentences_comet(comet_runs):
    from tests.helpers.tui import samples_shown
    from workbench.tui.app import WorkbenchApp

    out, runs = comet_runs.out, comet_runs.runs
    rows = [json.loads(line) for line in (runs[1] / "test_translations.jsonl").open()]
    app = WorkbenchApp(small(out.parent, name="out"))
    async with app.run_test(size=(100, 30)) as pilot:
        samples = await samples_shown(pilot, app)
        table = samples.query_one("#samples-table", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[-2] == "COMET b→a"
        summary = str(samples.query_one("#samples-summary", Static).render())
        assert "  COMET " in summary
        assert "paired t-test p" in summary
        assert "humans agree" in summary
        await pilot.press("o")
        await wait_for(pilot, lambda: str(list(table.columns.values())[-1].label) == "Δ ▼")
        shown = [table.get_row_at(n)[0].plain for n in range(table.row_count)]
        rises = {r["source"]: r["comet_after"] - r["comet_before"] for r in rows}
        order = [rises[s] for s in shown if s in rises]
        assert order == sorted(order, reverse=True)


def test_select_on_comet_chooses_the_epoch_by_validation_comet(comet_runs):
    stdout, run = comet_runs.second, comet_runs.runs[1]
    epochs = re.findall(r"  epoch (\d) done: BLEU \S+  chrF \S+  COMET (\S+)  eval loss", stdout)
    assert [e for e, _ in epochs] == ["1", "2", "3"]
    chosen = max(epochs, key=lambda e: float(e[1]))[0]  # the first of equal ones
    assert f"best epoch {chosen} (by validation COMET)" in stdout
    assert "loaded for each epoch's validation score beside the training step" in stdout
    summary = read_summary(run)
    assert summary is not None
    epochs_logged = summary.epochs or []
    assert [None if e.eval_comet is None else round(e.eval_comet, 2) for e in epochs_logged] == [
        float(c) for _, c in epochs
    ]
