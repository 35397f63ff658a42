"""``workbench compare``: the paired test printed, a page that loads nothing from anywhere,
and a run named twice or not at all in one line, on the recorded runs of
tests/fixtures/compare_runs. The comparison itself is tested in tests/unit/test_compare.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.runs import recorded_compare_runs


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Runs A and B (longer, faster) on one test set and C (another seed's test set),
    copied into an output folder of their own."""
    root = tmp_path_factory.mktemp("compare") / "out"
    return root, recorded_compare_runs(root)


def test_compare_command_prints_the_test_and_writes_a_page_that_loads_nothing(
    cli, three_runs, tmp_path
):
    root, (a, b, _) = three_runs
    out = tmp_path / "cmp"
    done = cli("compare", a, b, "--output-dir", str(root), "--out", str(out))
    assert done.returncode == 0
    printed = done.stdout
    assert "Settings that differ:" in printed
    assert re.search(r"epochs +2 +4", printed)
    assert re.search(r"p < 0\.001|p = 0\.\d+", printed)  # the paired test's p-value
    html = (out / "compare.html").read_text(encoding="utf-8")
    assert "<svg" in html
    assert "Validation BLEU per epoch" in html
    # Self-contained: no scripts, stylesheets, images or fonts fetched from anywhere.
    assert not re.search(r"https?://|<script|<link|src=|url\(", html)
    md = (out / "compare.md").read_text(encoding="utf-8")
    assert "| epochs | 2 | 4 |" in md
    assert "compare_bleu.svg" in md
    assert (out / "compare_bleu.svg").is_file()


def test_a_run_named_twice_or_not_at_all_is_one_clear_line(cli, three_runs):
    root, (a, _, _) = three_runs
    done = cli("compare", a, a, "--output-dir", str(root))
    assert done.returncode != 0
    assert "the same run is named twice" in done.stderr
    done = cli("compare", a, "nope", "--output-dir", str(root))
    assert done.returncode != 0
    assert "no run 'nope'" in done.stderr
    done = cli("compare", a, "--output-dir", str(root))
    assert done.returncode != 0
    assert "at least two runs" in done.stderr
