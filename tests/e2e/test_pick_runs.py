"""``train --pick mbr --utility chrf --candidates 4``: a tiny demo run picks its test set
too, beside beam search, which is unchanged; the pick is scored against beam with the
run's intervals and paired test, chrF marked "(used to pick)" and BLEU leading, since no
neural judge is at hand offline; the picked lines are kept beside the after samples, and
the report, compare and ``runs`` show all of it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.cli import CommandLine
from tests.helpers.paths import FIXTURES
from tests.helpers.runs import tiny_toml
from workbench.core.run_folder.output_folder import run_folders
from workbench.core.run_folder.samples import read_picked_translations, read_translations
from workbench.core.run_folder.summary_file import read_summary

PICK = ("--pick", "mbr", "--utility", "chrf", "--candidates", "4")


@dataclass
class PickRuns:
    """Two tiny runs with the same settings in one output folder, the second with
    ``PICK``, and what each printed."""

    out: Path
    beam: Path
    picked: Path
    beam_lines: str
    picked_lines: str


@pytest.fixture(scope="module")
def pick_runs(tmp_path_factory: pytest.TempPathFactory) -> PickRuns:
    folder = tmp_path_factory.mktemp("pick")
    out = folder / "out"
    toml = folder / "tiny.toml"
    toml.write_text(tiny_toml(epochs=2), encoding="utf-8")
    printed = []
    with pytest.MonkeyPatch.context() as patch:
        for extra in ((), PICK):
            done = CommandLine(patch)(
                "train", "--headless", "--preset", "demo", "--config", str(toml),
                "--output-dir", str(out), *extra,
                env={"WORKBENCH_CACHE": str(folder / "cache")},
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-3000:]
            printed.append(done.stdout)
    picked, beam = run_folders(out)  # newest first
    return PickRuns(out, beam, picked, *printed)


def test_a_pick_leaves_the_beam_line_as_it_was(pick_runs):
    def test_line(printed: str) -> str:
        return next(line for line in printed.splitlines() if line.lstrip().startswith("test ("))

    assert test_line(pick_runs.picked_lines) == test_line(pick_runs.beam_lines)
    assert "picked" not in pick_runs.beam_lines
    beam = read_summary(pick_runs.beam)
    assert beam is not None
    assert beam.picked is None


def test_the_pick_is_scored_against_beam_with_chrf_marked_and_bleu_leading(pick_runs):
    lines = pick_runs.picked_lines
    assert "test, picked by mbr:chrF among 4 sampled candidates a line" in lines
    assert "  BLEU (lead judge) " in lines
    assert "  chrF (used to pick) " in lines
    assert "chrF++ (of the picker's family)" in lines
    assert "no independent neural judge at hand" in lines
    assert "BLEU leads, as a surface metric that did not pick" in lines
    assert "on BLEU, the lead judge" in lines
    summary = read_summary(pick_runs.picked)
    assert summary is not None
    picked = summary.picked
    assert picked is not None
    assert (picked.metric, picked.candidates, picked.candidates_from) == ("chrF", 4, "sample")
    bleu, chrf = picked.change("BLEU"), picked.change("chrF")
    assert bleu is not None
    assert chrf is not None
    test = summary.test
    assert test is not None
    # beam is the baseline: its side is the run's "after", to the digit
    assert (bleu.before, chrf.before) == (test.bleu_after, test.chrf_after)
    assert bleu.test == "paired bootstrap"
    assert len(bleu.delta_ci) == 2


def test_the_picked_lines_are_kept_beside_the_after_samples(pick_runs):
    samples, _ = read_translations(pick_runs.picked, "test")
    picked = read_picked_translations(pick_runs.picked, "test")
    assert len(picked) == len(samples) > 0
    assert [p.beam for p in picked] == [s.after for s in samples]
    assert all(1 <= p.distinct <= 4 and p.score is not None for p in picked)
    assert read_picked_translations(pick_runs.beam, "test") == []


def test_report_compare_and_runs_show_the_pick(pick_runs, cli):
    done = cli("report", str(pick_runs.picked))
    assert done.returncode == 0, done.stderr
    report = (pick_runs.picked / "report.md").read_text(encoding="utf-8")
    assert "## Picked among candidates against beam search" in report
    assert "| BLEU (lead judge) |" in report
    assert "| chrF (used to pick) |" in report
    assert "no independent neural judge at hand" in report
    html = (pick_runs.picked / "report.html").read_text(encoding="utf-8")
    assert "chrF (used to pick)" in html

    done = cli("compare", str(pick_runs.beam), str(pick_runs.picked))
    assert done.returncode == 0, done.stderr
    assert "Test set picked among candidates against beam search, run B:" in done.stdout
    assert "  chrF (used to pick) " in done.stdout
    assert "run A:" not in done.stdout

    done = cli("runs", "--output-dir", str(pick_runs.out))
    assert done.returncode == 0, done.stderr
    picked_line = next(line for line in done.stdout.splitlines() if pick_runs.picked.name in line)
    assert "pick=mbr" in picked_line
    assert "utility=chrf" in picked_line
    assert "candidates=4" in picked_line


def test_the_runs_metricx_leads_the_verdict_of_a_chrf_pick(tmp_path: Path, metricx_models):
    """With MetricX at hand (the tiny fixture), a neural judge of another family than
    chrF's leads: the pick's MetricX is scored against beam's, whose segments "after"
    scored, lower is better."""
    toml = tmp_path / "tiny.toml"
    toml.write_text(tiny_toml(epochs=1), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        done = CommandLine(patch)(
            "train", "--headless", "--preset", "demo", "--config", str(toml),
            "--output-dir", str(tmp_path / "out"), *PICK,
            "--metricx", str(metricx_models["tiny-fp32"]),
            "--metricx-tokenizer", str(FIXTURES / "metricx" / "tokenizer"),
            env={"WORKBENCH_CACHE": str(tmp_path / "cache")},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    picked_part = done.stdout[done.stdout.index("test, picked by mbr:chrF") :]
    (lead,) = [line for line in picked_part.splitlines() if "(lead judge)" in line]
    assert lead.lstrip().startswith("MetricX-24 (")
    assert "lower is better" in lead
    assert "no independent neural judge at hand" not in done.stdout
    (run,) = run_folders(tmp_path / "out")
    summary = read_summary(run)
    assert summary is not None
    assert summary.picked is not None
    assert summary.test is not None
    metricx = summary.picked.change("MetricX-24")
    assert metricx is not None
    assert metricx.lower_is_better
    assert summary.test.metricx is not None
    assert metricx.before == summary.test.metricx.after  # beam's side is the run's "after"
    assert metricx.test == "paired t-test"


def test_a_pick_that_fails_at_the_end_keeps_the_run_and_its_scores(tmp_path: Path):
    """A QE model that cannot be fetched (a Hub id offline, checked only when it loads)
    costs the run its pick and nothing else: a warning, the run finished, its scores kept."""
    toml = tmp_path / "tiny.toml"
    toml.write_text(tiny_toml(epochs=1), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        done = CommandLine(patch)(
            "train", "--headless", "--preset", "demo", "--config", str(toml),
            "--output-dir", str(tmp_path / "out"), "--pick", "qe", "--candidates", "2",
            "--qe-model", "nobody/no-such-cometkiwi",
            env={"WORKBENCH_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "warning: the test set was not picked: " in done.stdout + done.stderr
    (run,) = run_folders(tmp_path / "out")
    summary = read_summary(run)
    assert summary is not None
    assert summary.status == "finished"
    assert summary.picked is None
    assert summary.test is not None
    assert (tmp_path / "out" / "best_model").is_dir()
