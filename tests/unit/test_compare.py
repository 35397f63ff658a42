"""Runs side by side with sacreBLEU's paired tests (core.experiments.compare; the
``compare`` command is in tests/cli/test_cli_compare.py).

Three real tiny runs, recorded in ``tests/fixtures/compare_runs`` (see
``record_tiny_run.py``): A and B share their test set (B trains longer, at a higher rate),
C draws another test set (another seed). The paired tests must run for B and refuse C
with the reason. Compare reads only the files a run wrote, so recorded runs are what a
fresh training would give it, without a minute of training.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import sacrebleu

from tests.fixtures.record_tiny_run import COMPARE_RUNS, COMPARE_TARGET
from tests.helpers.runs import recorded_compare_runs
from workbench.core.evaluate.breakdown import gain_breakdown
from workbench.core.evaluate.metrics import sentence_chrf
from workbench.core.evaluate.significance import randomisation_p
from workbench.core.events import Sample
from workbench.core.experiments.compare.cells import by_length_header, by_length_rows
from workbench.core.experiments.compare.read import (
    ComparedRun,
    Difference,
    build_comparison,
    differences,
)
from workbench.core.experiments.compare.render import render_html, render_markdown, render_text
from workbench.core.experiments.table import RunRow
from workbench.core.records.files import read_jsonl
from workbench.core.records.run_records import as_json
from workbench.core.run_folder.saved_config import SavedConfig
from workbench.core.views.score_text import format_p


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Runs A and B (longer, faster) on one test set and C (another seed's test set),
    copied into an output folder of their own."""
    root = tmp_path_factory.mktemp("compare") / "out"
    return root, recorded_compare_runs(root)


def test_paired_tests_run_on_a_shared_test_set_and_refuse_another(three_runs):
    root, (a, b, c) = three_runs
    comparison = build_comparison([a, b, c], root)
    assert comparison.settings["epochs"] == [2.0, 4.0, 2.0]
    assert comparison.settings["seed"] == [42, 42, 7]
    assert [p.letter for p in comparison.paired] == ["B"]
    result = comparison.paired[0].scores
    # Both sides are the runs' own best-model translations: the same BLEU their summaries hold.
    run_a, run_b = comparison.runs[0].row.test, comparison.runs[1].row.test
    assert run_a is not None
    assert run_b is not None
    assert (result.bleu_before, result.bleu_after) == (run_a.bleu_after, run_b.bleu_after)
    assert 0 < result.bleu_p <= 1
    assert 0 < comparison.paired[0].bleu_p_ar <= 1
    assert "seed 7" in comparison.not_paired["C"]
    assert "same sentences" in comparison.not_paired["C"]
    text = render_text(comparison)
    assert "No paired test of C against A: run C's test set is" in text
    assert re.search(r"\n  B +\d+\.\d\d \(", text)  # B's row of the test table
    assert "Validation BLEU per epoch" in text


def _run(letter: str, afters: list[str], refs: list[str]) -> ComparedRun:
    rows = [
        Sample(f"s{n}", r, "", t, 0.0, 0.0)
        for n, (t, r) in enumerate(zip(afters, refs, strict=True))
    ]
    return ComparedRun(
        letter=letter,
        row=RunRow(letter, letter, "demo", "finished"),
        saved=SavedConfig({}),
        epochs=[],
        train_loss=[],
        test_rows=rows,
        bleu_tokenize="13a",
    )


def test_the_sentences_shown_are_the_largest_gaps_each_way():
    refs = ["the cat sat on the mat", "a dog ran", "it is raining today", "hello there"]
    first = _run("A", ["the cat sat on the mat", "a cat ran", "it rains", "hello there"], refs)
    other = _run("B", ["cat", "a dog ran", "it is raining today", "hello there"], refs)
    better, worse = differences(first, other, k=3)
    assert [d.source for d in better] == ["s2", "s1"]  # the larger gain first
    assert [d.source for d in worse] == ["s0"]
    assert all(isinstance(d, Difference) and d.gap > 0 for d in better)
    assert "s3" not in {d.source for d in better + worse}  # identical translations


def test_approximate_randomisation_agrees_with_the_direction_of_the_data():
    refs = [f"sentence number {n} is here" for n in range(40)]
    same = randomisation_p(refs, refs, refs, "13a", n_permutations=200)
    assert same == {"bleu": 1.0, "chrf": 1.0}  # equal systems: no difference
    worse = [r.replace("here", "there").replace("number", "no") for r in refs]
    far = randomisation_p(worse, refs, refs, "13a", n_permutations=200)
    assert far["bleu"] < 0.01
    assert far["chrf"] < 0.01
    assert format_p(far["bleu"], 200) == "p < 0.005"


def test_p_values_at_the_floor_of_the_test_read_as_less_than():
    assert format_p(round(1 / 10001, 6), 10000) == "p < 0.0001"
    assert format_p(1 / 1001, 1000) == "p < 0.001"
    assert format_p(2 / 1001, 1000) == "p = 0.002"
    assert format_p(3 / 10001, 10000) == "p = 0.0003"
    assert format_p(0.25, 1000) == "p = 0.250"


def test_the_markdown_and_the_page_say_why_there_is_no_paired_test(three_runs):
    root, (a, _, c) = three_runs
    comparison = build_comparison([a, c], root)
    assert not comparison.paired
    assert comparison.test_label is None
    assert "No paired test of B against A" in render_markdown(comparison)
    assert "No paired test of B against A" in render_html(comparison)


def test_each_run_shows_its_test_set_by_source_length_and_a_run_without_it_dashes(tmp_path):
    """A and B recorded the breakdown (computed here from their own translations, as a run
    computes it); C's summary has none (a hand-edited one)."""
    root = tmp_path / "out"
    for name in COMPARE_RUNS:
        shutil.copytree(COMPARE_TARGET / name, root / "runs" / name)
    a, b, c = COMPARE_RUNS
    for name in (a, b):
        folder = root / "runs" / name
        rows = [
            Sample(
                **row,
                chrf_before=round(sentence_chrf(row["before"], row["reference"]), 2),
                chrf_after=round(sentence_chrf(row["after"], row["reference"]), 2),
            )
            for row in read_jsonl(folder / "test_translations.jsonl")
        ]
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        summary.update(as_json(gain_breakdown(rows, summary["bleu_tokenize"], "en")))
        (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    comparison = build_comparison([a, b, c], root)
    table = by_length_rows(comparison)
    assert by_length_header(comparison)[:2] == ["Run", "Source length (words)"]
    assert [row[0] for row in table] == ["A", "B", "C"]  # HSK sentences: one bucket each
    for row, run in zip(table[:2], comparison.runs[:2], strict=True):
        test = run.row.test
        assert test is not None
        refs = [[r.reference for r in run.test_rows]]
        after = sacrebleu.corpus_bleu([r.after for r in run.test_rows], refs, tokenize="zh")
        assert test.bleu_after == round(after.score, 2)  # the headline is sacreBLEU's
        assert row[1:3] == ["1–10", f"{len(run.test_rows)}"]
        assert row[3].startswith(f"{test.bleu_before:.2f} → {test.bleu_after:.2f} (")
    assert table[2] == ["C", "—", "—", "—", "—"]
    text = render_text(comparison)
    assert "Test set by source length. Corpus BLEU and chrF" in text
    assert re.search(r"\n  C +— +— +— +—\n", text)
    md = render_markdown(comparison)
    assert "## Test set by source length" in md
    assert "| C | — | — | — | — |" in md
    assert "<h2>Test set by source length</h2>" in render_html(comparison)


def test_records_beside_the_settings_are_never_listed_as_settings(tmp_path: Path):
    """config.json holds the run's precision and cleaning records beside its settings: two
    runs whose records differ (another machine, other data dropped) list only what the
    user set differently."""
    root = tmp_path / "out"
    a, b, _ = COMPARE_RUNS
    for name in (a, b):
        shutil.copytree(COMPARE_TARGET / name, root / "runs" / name)
    before = build_comparison([a, b], root).settings
    config = root / "runs" / b / "config.json"
    saved = json.loads(config.read_text(encoding="utf-8"))
    saved["precision"] = {"device": "cuda", "training": "bf16", "training_tf32": True}
    saved["cleaning"] = {"rules": ["empty"], "counts": {"empty": 5}, "pairs_in": 9, "dropped": 5}
    config.write_text(json.dumps(saved), encoding="utf-8")
    after = build_comparison([a, b], root).settings
    assert after == before
    assert set(after) == {"epochs", "learning_rate"}  # what the two runs truly differ in
