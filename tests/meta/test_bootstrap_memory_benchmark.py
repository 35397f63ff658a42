"""The bootstrap memory benchmark's code paths at toy size: correctness only, never timing."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
import sacrebleu

from tests.helpers.paths import REPO


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(REPO / "benchmarks"))  # as benchmarks/bootstrap_memory.py runs
    return importlib.import_module("bootstrap_memory")


def test_the_text_is_real_sentences_made_worse_by_each_rate(bench):
    references, weak, good = bench.make_systems(300, seed=1)
    assert len(references) == len(weak) == len(good) == 300
    assert bench.make_systems(5, seed=1)[0] == references[:5]  # seeded
    assert len(set(references)) == 300  # 300 of the 4,354 HSK sentences, none twice
    good_chrf, weak_chrf = (sacrebleu.corpus_chrf(h, [references]).score for h in (good, weak))
    assert 100 > good_chrf > weak_chrf > 10


def run(arm: str, n: int, seconds: float, numbers: object) -> dict[str, object]:
    """One measurement as a child process reports it."""
    return dict(arm=arm, n=n, n_bootstrap=40, seconds=seconds, extra_mib=1.0, numbers=numbers)


def test_every_arm_gives_its_counterparts_numbers_and_the_report_says_so(bench, tmp_path: Path):
    """Each arm in this process at toy size, one of them in a fresh process as the
    benchmark runs them; the report renders from the rows."""
    references, before, after = bench.make_systems(90)
    found = {arm: bench.run_arm(arm, references, before, after, 40) for arm in bench.SIZES}
    rows = [
        bench.summarise([run(arm, 90, seconds, numbers) for seconds in (0.1, 0.3, 0.2)])
        for arm, numbers in found.items()
    ]
    assert rows[0]["seconds"] == 0.2
    assert rows[0]["runs"] == [(0.1, 1.0), (0.3, 1.0), (0.2, 1.0)]
    assert bench.compare(rows) == [
        "bounded = sacrebleu at 90 sentences: identical",
        "workbench = old workbench at 90 sentences: identical",
        "bounded corpus_score = corpus_score at 90 sentences: identical",
    ]
    child = bench.measure("bounded", 90, 40)
    assert child["numbers"] == found["bounded"]
    assert child["extra_mib"] >= 0
    context = {"cpu": "a CPU", "cores": 2, "load_before": "0 0 0", "load_after": "0 0 0"}
    context.update(quick=True, date="today", wall=6.0, reps=3)
    text = bench.write_report(tmp_path / "BOOTSTRAP.md", rows, context)
    assert (tmp_path / "BOOTSTRAP.md").read_text(encoding="utf-8") == text
    assert "| sacrebleu | 90 | 0.2 | 1 | 0.1 s, 1 MiB; 0.3 s, 1 MiB; 0.2 s, 1 MiB |" in text
    assert "- bounded = sacrebleu at 90 sentences: identical" in text
    assert bench.TEXT_NOTE in text  # what was measured, on what text
    assert "DIFFERENT" not in text


def test_runs_that_disagree_are_reported_as_different(bench):
    rows = [
        bench.summarise([run("bounded", 90, 0.1, [1.0]), run("bounded", 90, 0.1, [2.0])]),
        bench.summarise([run("sacrebleu", 90, 0.1, [1.0])]),
    ]
    assert rows[0]["numbers"] is None
    assert bench.compare(rows) == ["bounded = sacrebleu at 90 sentences: DIFFERENT"]


def test_extrapolation_is_linear_from_the_two_largest_sizes(bench):
    rows = [
        {"arm": "sacrebleu", "n": n, "extra_mib": mib}
        for n, mib in ((1000, 100.0), (10000, 820.0), (20000, 1640.0))
    ]
    assert bench.scaling(rows, "sacrebleu", 100000) == (
        "sacrebleu: 82 MiB more per 1,000 sentences between 10,000 and 20,000; "
        "at 100,000, extrapolated (not run): about 8,200 MiB"
    )
    assert bench.scaling(rows, "sacrebleu", 20000) is None  # measured, not extrapolated


def test_the_quick_run_measures_every_arm_in_fresh_processes(tmp_path: Path):
    """``bootstrap_memory.py --quick``, as a user runs it: every arm in its own process,
    then the report, here in tmp_path (by default a temporary folder, never BOOTSTRAP.md)."""
    from tests.helpers.benchmarks import run_benchmark

    out = tmp_path / "BOOTSTRAP.md"
    run_benchmark("bootstrap_memory.py", "--quick", "--reps", "1", "--out", str(out), cwd=tmp_path)
    text = out.read_text(encoding="utf-8")
    assert "n/a" not in text, text
    for arm in ("sacrebleu", "bounded", "old workbench", "workbench", "corpus_score"):
        assert f"| {arm} | 120 |" in text
    assert text.count(": identical") == 3
    assert "DIFFERENT" not in text
