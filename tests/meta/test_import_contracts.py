"""The layering's import-linter contracts (``[tool.importlinter]`` in pyproject.toml) catch
what they promise: a copy of the package with one bad import planted breaks the contract
that forbids it, and the copy as it is keeps them all.

The contracts are read from pyproject.toml itself, so a contract edited there is the one
tested here; every contract has at least one planted violation.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the venv is 3.11; pyproject's python_version is 3.10
    import tomli as tomllib

PYPROJECT = REPO / "pyproject.toml"

#: ``lint-imports`` itself, run by the interpreter of this test (the venv's).
LINT_IMPORTS = (
    "import sys; from importlinter.cli import lint_imports_command; "
    "sys.exit(lint_imports_command())"
)


def contracts() -> dict[str, str]:
    """Contract id -> the name ``lint-imports`` reports it by."""
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]
    return {c["id"]: c["name"] for c in config["contracts"]}


#: ``(contract id, {file under workbench/: source})``: the violations planted, one case at a
#: time; an existing file gets its source appended. An import inside a function or under
#: ``TYPE_CHECKING`` counts as much as one at the top.
PLANTED: list[tuple[str, dict[str, str]]] = [
    ("top-level", {"core/planted.py": "from workbench.cli.options import DEFAULT_MODEL_DIR\n"}),
    ("top-level", {"core/planted.py": "def later():\n    import workbench.cli.headless\n"}),
    (
        "top-level",
        {
            "core/records/planted.py": (
                "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                "    from workbench.tui.app import WorkbenchApp\n"
            )
        },
    ),
    ("top-level", {"core/planted.py": "from workbench.terminal import to_rich\n"}),
    ("top-level", {"tui/planted.py": "from workbench.cli import main\n"}),
    ("top-level", {"planted.py": "VALUE = 1\n"}),  # a top-level module given no layer
    ("core-no-terminal", {"core/planted.py": "import textual\n"}),
    (
        "core-no-terminal",
        {"core/train/planted.py": "def later():\n    from rich.text import Text\n"},
    ),
    ("tui-work-no-terminal", {"tui/run_watcher.py": "\n\ndef later():\n    import textual\n"}),
    # through a module of the TUI's that imports Textual
    (
        "tui-work-no-terminal",
        {"tui/run_drawing.py": "\n\ndef later():\n    from workbench.tui import messages\n"},
    ),
    ("core-chain", {"core/views/planted.py": "from workbench.core.train import trainer\n"}),
    (
        "core-chain",
        {"core/data/planted.py": "def later():\n    from workbench.core.report import build\n"},
    ),
    # the base reaching into a package
    (
        "core-chain",
        {"core/config/build.py": "\n\ndef later():\n    from workbench.core import views\n"},
    ),
    ("core-chain", {"core/planted/__init__.py": '"""A core package outside the chain."""\n'}),
    ("torch-where-a-model-runs", {"core/records/planted.py": "import torch\n"}),
    (
        "torch-where-a-model-runs",
        {"core/evaluate/planted.py": "def later():\n    from transformers import AutoModel\n"},
    ),
    ("views-no-torch", {"core/views/planted.py": "import torch\n"}),
    # views imports languages, which would import torch
    ("views-no-torch", {"core/languages.py": "\n\ndef later():\n    import torch\n"}),
    (
        "no-cycles",
        {
            "core/views/planted.py": "from workbench.core.views import numbers\n",
            "core/views/numbers.py": (
                "\n\ndef later():\n    from workbench.core.views import planted\n"
            ),
        },
    ),
]


def lint_imports(root: Path) -> tuple[int, str]:
    """Run ``lint-imports`` on the package under ``root`` with pyproject.toml's contracts:
    its exit status and its report, whitespace collapsed (it wraps long lines)."""
    shutil.copyfile(PYPROJECT, root / "pyproject.toml")
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200", "NO_COLOR": "1"}
    out = subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS, "--no-cache", "--no-logo", "pyproject.toml"],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        timeout=120,
    )
    return out.returncode, " ".join((out.stdout + out.stderr).split())


def copy_package(root: Path) -> Path:
    """A copy of the workbench package under ``root``."""
    package = root / "workbench"
    shutil.copytree(
        REPO / "workbench", package, ignore=shutil.ignore_patterns("__pycache__", "*.tcss")
    )
    return package


def test_every_contract_has_a_planted_violation():
    assert len(contracts()) >= 6
    assert {contract for contract, _ in PLANTED} == set(contracts())


def test_the_package_as_it_is_keeps_every_contract(tmp_path: Path):
    copy_package(tmp_path)
    code, report = lint_imports(tmp_path)
    assert code == 0, report
    for name in contracts().values():
        assert f"{name} KEPT" in report


@pytest.mark.parametrize(
    ("contract", "planted"), PLANTED, ids=[f"{c}:{next(iter(p))}" for c, p in PLANTED]
)
def test_a_planted_violation_breaks_its_contract(
    tmp_path: Path, contract: str, planted: dict[str, str]
):
    package = copy_package(tmp_path)
    for path, source in planted.items():
        target = package / path
        target.parent.mkdir(parents=True, exist_ok=True)
        before = target.read_text(encoding="utf-8") if target.exists() else ""
        target.write_text(before + source, encoding="utf-8")
    code, report = lint_imports(tmp_path)
    assert code == 1, report
    assert f"{contracts()[contract]} BROKEN" in report, report
