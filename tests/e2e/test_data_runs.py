"""Data loading, cleaning and splitting, from the HSK corpus and from local files.

The tests that train (or build), split from tests/unit/test_data.py, whose other tests do not.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import TINY_DEMO_ARGS
from tests.helpers.data import cleaned_hsk_pairs, moses_files
from tests.helpers.runs import tiny_toml


def test_train_headless_reads_a_bare_moses_prefix(cli, tmp_path: Path):
    """``--data corpus`` with corpus.en/corpus.zh in the working folder trains, offline."""
    pairs = cleaned_hsk_pairs()
    moses_files(tmp_path / "corpus", [p.source for p in pairs[:60]], [p.target for p in pairs[:60]])
    (tmp_path / "tiny.toml").write_text(tiny_toml(epochs=1.0), encoding="utf-8")
    result = cli(*TINY_DEMO_ARGS, "--data", "corpus", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "48 train / 6 validation" in result.stdout
    assert "corpus.en + corpus.zh" in result.stdout
    assert "Traceback" not in result.stderr
