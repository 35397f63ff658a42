"""``workbench train`` refusing a run that will not fit in one line, naming the flags that
would make it fit, before any weight or data is read: NLLB-200 3.3B's config with no
weights behind it. The plan itself is tested in tests/unit/test_memory_plan.py, and held
against measured peaks in tests/e2e/test_memory_plan_runs.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.memory import NEEDS, NLLB_3B_CONFIG, figure_in


@pytest.fixture(scope="module")
def nllb_3b_folder(tmp_path_factory, family_models) -> Path:
    """NLLB-200 3.3B's config.json and a tokenizer of its family, and no weights."""
    folder = tmp_path_factory.mktemp("nllb-3.3B")
    for path in family_models["nllb"].iterdir():
        if path.name.startswith("tokenizer") or path.suffix == ".model":
            shutil.copy(path, folder / path.name)
    shutil.copy(NLLB_3B_CONFIG, folder / "config.json")
    return folder


def refused(cli, folder: Path, pairs: Path, tmp_path: Path, *extra: str):
    return cli(
        "train", "--headless", "--model", str(folder), "--data", str(pairs),
        "--source-lang", "en", "--target-lang", "zh", "--batch-size", "16",
        "--memory-budget", "24", "--output-dir", str(tmp_path / "out"), "--no-interact",
        *extra, cwd=tmp_path,
    )  # fmt: skip


def test_a_3b_model_that_will_not_fit_is_refused_in_one_line_naming_lora(
    cli, nllb_3b_folder, pairs_file, tmp_path
):
    result = refused(cli, nllb_3b_folder, pairs_file, tmp_path)
    lines = result.stderr.strip().splitlines()
    assert (result.returncode, len(lines)) == (2, 1), result.stderr[-2000:]
    line = lines[0]
    assert "will not fit" in line
    assert "--lora" in line
    assert figure_in(NEEDS, line) > 53  # 16 bytes a parameter alone: 53.5 GB
    # Before any weight was looked for: no data read, no run folder, no weights error.
    assert "[data]" not in result.stdout
    assert not (tmp_path / "out" / "runs").exists()


def test_with_lora_the_3b_plan_is_smaller(cli, nllb_3b_folder, pairs_file, tmp_path):
    full = refused(cli, nllb_3b_folder, pairs_file, tmp_path)
    lora = refused(cli, nllb_3b_folder, pairs_file, tmp_path, "--lora")
    assert figure_in(NEEDS, lora.stderr) < figure_in(NEEDS, full.stderr)
