"""The commands as a user runs them (``cli``: ``workbench.cli.main.main([...])`` in the
test's process; ``run_cli``: ``python -m workbench`` in a new one, where the process is
the point), without training a model (those are in e2e/). The fixtures they share with
another folder are in tests/conftest.py; the one only they use is here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.memory import NLLB_3B_CONFIG


@pytest.fixture(scope="module")
def nllb_3b_folder(tmp_path_factory, family_models) -> Path:
    """NLLB-200 3.3B's config.json and a tokenizer of its family, and no weights: a model
    whose memory plan is real and whose weights are never looked for before it."""
    folder = tmp_path_factory.mktemp("nllb-3.3B")
    for path in family_models["nllb"].iterdir():
        if path.name.startswith("tokenizer") or path.suffix == ".model":
            shutil.copy(path, folder / path.name)
    shutil.copy(NLLB_3B_CONFIG, folder / "config.json")
    return folder
