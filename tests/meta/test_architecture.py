"""What a contract cannot say about the code's shape, checked here.

The layering itself (the core imports only itself and ``workbench.errors``, the TUI never
the CLI, the core's package chain over its base, torch only where a model runs, no cycles)
is declared as import-linter contracts in pyproject.toml's ``[tool.importlinter]``, run by
``lint-imports`` in the README's test command and proven by
``tests/meta/test_import_contracts.py``. What stays here:

- importing the whole core at run time loads no Textual, through a library's import too;
- every core package says what it owns in its docstring, and docs/architecture.md's map of
  the code names every core module;
- ruff's banned imports (``workbench/core/ruff.toml``) flag a wrong import in an editor;
- no test module imports another, and only e2e/ is slow (that every test can fail is
  ``tests/meta/test_tests_can_fail.py``);
- no module of ``workbench/`` or ``benchmarks/`` reaches 350 lines, no function or method
  there is over 100, and the core has few loose modules.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import workbench

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the venv is 3.11; pyproject's python_version is 3.10
    import tomli as tomllib

PACKAGE = Path(workbench.__path__[0])
REPO = PACKAGE.parent
ARCHITECTURE = REPO / "docs" / "architecture.md"


def core_layers() -> list[list[str]]:
    """The core's layers, top first, as the ``core-chain`` contract in pyproject.toml
    declares them: one package each, then the base (the loose modules, config/, records/,
    run_folder/)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(
        c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "core-chain"
    )
    return [[name.strip() for name in layer.split(":")] for layer in contract["layers"]]


def core_packages() -> list[str]:
    """The core's packages of the chain (not the base), top first."""
    return [name for layer in core_layers()[:-1] for name in layer]


def test_the_chain_is_read_from_the_contract():
    assert core_packages()[0] == "experiments"
    assert core_packages()[-1] == "views"
    assert {"config", "records", "run_folder"} <= set(core_layers()[-1])


def test_core_never_imports_textual():
    import pkgutil

    import workbench.core

    modules = [m.name for m in pkgutil.walk_packages(workbench.core.__path__, "workbench.core.")]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print('TEXTUAL', 'textual' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "TEXTUAL False" in out.stdout
    assert len(modules) >= 10
    assert any(m.count(".") >= 3 for m in modules)  # the modules inside packages too


def test_every_core_package_says_what_it_owns():
    for package in core_packages():
        doc = ast.get_docstring(
            ast.parse((PACKAGE / "core" / package / "__init__.py").read_text(encoding="utf-8"))
        )
        assert doc, package
        assert len(doc.split()) >= 8, package


def development_map() -> str:
    """The map of the code: the first code block of docs/architecture.md's code map."""
    section = ARCHITECTURE.read_text(encoding="utf-8").split("## The code map", 1)[1]
    return section.split("```", 2)[1]


def test_the_readme_map_names_every_core_module():
    text = development_map()
    missing = []
    for path in sorted((PACKAGE / "core").rglob("*.py")):
        if path.name == "__init__.py":
            continue
        name = path.stem
        folder = path.parent.relative_to(PACKAGE / "core").as_posix()
        if name not in text.replace(".py", " ").split() and f"{name}.py" not in text:
            missing.append(path.relative_to(PACKAGE).as_posix())
        if folder != "." and f"{folder.split('/')[-1]}/" not in text:
            missing.append(f"{folder}/ (the package)")
    assert missing == []


@pytest.mark.parametrize(
    ("planted", "source", "banned"),
    [
        ("core/planted.py", "import textual\n", "textual"),
        ("core/train/planted.py", "def later():\n    from rich.text import Text\n", "rich"),
        (
            "core/planted.py",
            "from workbench.cli.options import DEFAULT_MODEL_DIR\n",
            "workbench.cli",
        ),
        (
            "core/records/planted.py",
            "from workbench.tui.app import WorkbenchApp\n",
            "workbench.tui",
        ),
        ("core/views/planted.py", "import torch\n", "torch"),
        (
            "core/views/planted.py",
            "def later():\n    from transformers import pipeline\n",
            "transformers",
        ),
        ("core/views/planted.py", "import textual.app\n", "textual"),  # the core's bans hold too
        ("core/train/planted.py", "import torch\n", None),  # a package that runs a model
        ("tui/planted.py", "from rich.text import Text\n", None),  # a front end
    ],
)
def test_ruff_shows_the_layering_for_a_planted_import(
    tmp_path: Path, planted: str, source: str, banned: str | None
):
    """The layering as banned imports (workbench/core/ruff.toml, core/views/ruff.toml), so an
    editor marks a wrong import as it is typed: ruff flags each one planted, and only those."""
    pytest.importorskip("ruff")
    import shutil

    for config in ("pyproject.toml", "workbench/core/ruff.toml", "workbench/core/views/ruff.toml"):
        (tmp_path / config).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PACKAGE.parent / config, tmp_path / config)
    target = tmp_path / "workbench" / planted
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(source, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "TID251", str(target)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    if banned is None:
        assert out.returncode == 0, out.stdout + out.stderr
    else:
        assert out.returncode == 1, out.stdout + out.stderr
        assert f"`{banned}` is banned" in out.stdout


def imports_of_test_modules(folder: Path) -> list[str]:
    """Each import of a test module (``test_*``) by any module under ``folder``: what two
    test modules share belongs in tests/helpers, so that moving or splitting one test
    module never breaks another."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                if name.split(".")[-1].startswith("test_"):
                    found.append(f"{path.relative_to(folder).as_posix()}: {name}")
                    break
    return found


def test_no_test_module_imports_another(tmp_path: Path):
    assert imports_of_test_modules(PACKAGE.parent / "tests") == []
    (tmp_path / "test_planted.py").write_text(
        "from tests.unit.test_data import helper\nimport tests.cli.test_cli\n"
        "from tests.tui import test_tui\n",
        "utf-8",
    )
    assert imports_of_test_modules(tmp_path) == [
        "test_planted.py: tests.unit.test_data",
        "test_planted.py: tests.cli.test_cli",
        "test_planted.py: tests.tui.test_tui",
    ]


def slow_marks_outside_e2e(tests: Path) -> list[str]:
    """Test modules outside ``tests/e2e`` that mark a test ``slow`` by hand: e2e/'s
    conftest.py marks its own, and a slow test elsewhere would be missed by the rule that
    ``-m "not slow"`` is everything but e2e/."""
    found = []
    for path in sorted(tests.rglob("test_*.py")):
        if "e2e" in path.relative_to(tests).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "slow"
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "mark"
            ):
                found.append(path.relative_to(tests).as_posix())
                break
    return found


def test_only_e2e_is_slow_and_by_its_folder(tmp_path: Path):
    assert slow_marks_outside_e2e(PACKAGE.parent / "tests") == []
    (tmp_path / "unit").mkdir()
    (tmp_path / "e2e").mkdir()
    planted = "import pytest\n\n\n@pytest.mark.slow\ndef test_x():\n    assert True\n"
    (tmp_path / "unit" / "test_planted.py").write_text(planted, "utf-8")
    (tmp_path / "e2e" / "test_planted.py").write_text(planted, "utf-8")
    assert slow_marks_outside_e2e(tmp_path) == ["unit/test_planted.py"]


#: The size a module stays under, so that it reads in one sitting and says one thing.
MAX_MODULE_LINES = 350
#: At most this many loose modules beside the core's packages (``__init__`` not counted).
MAX_LOOSE_MODULES = 6


def long_modules(*folders: Path) -> dict[str, int]:
    """Each module under ``folders`` of :data:`MAX_MODULE_LINES` lines or more, with its
    length."""
    return {
        p.relative_to(folder.parent).as_posix(): n
        for folder in folders
        for p in sorted(folder.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) >= MAX_MODULE_LINES
    }


def test_modules_stay_small(tmp_path: Path):
    assert long_modules(PACKAGE, REPO / "benchmarks") == {}
    planted = tmp_path / "benchmarks" / "long.py"
    planted.parent.mkdir()
    planted.write_text("VALUE = 1\n" * MAX_MODULE_LINES, encoding="utf-8")
    assert long_modules(PACKAGE, planted.parent) == {"benchmarks/long.py": MAX_MODULE_LINES}


#: The most lines a function or method may take, its docstring included (from its ``def``
#: line to its last; decorators not counted), so that it reads as one story.
MAX_FUNCTION_LINES = 100


def _functions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """Each function and method under ``node``, nested ones too, by qualified name
    (``Class.method``, ``outer.inner``)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"{prefix}{child.name}", child
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


def long_functions(*folders: Path) -> dict[str, int]:
    """Each function or method under ``folders`` longer than :data:`MAX_FUNCTION_LINES`, as
    ``path::qualified name``, with its length in lines."""
    found = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for name, node in _functions(tree):
                assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                assert node.end_lineno is not None
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found[f"{path.relative_to(folder.parent).as_posix()}::{name}"] = length
    return found


def test_functions_stay_short(tmp_path: Path):
    assert long_functions(PACKAGE, REPO / "benchmarks") == {}
    planted = tmp_path / "benchmarks" / "long.py"
    planted.parent.mkdir()

    def body(lines: int, indent: str) -> str:
        return "".join(f"{indent}x{i} = {i}\n" for i in range(lines))

    planted.write_text(
        # one line over: a method, and a function nested in one that is not over itself
        f"class Chart:\n    def draw(self):\n{body(MAX_FUNCTION_LINES, ' ' * 8)}\n"
        f"def outer():\n    async def inner():\n{body(MAX_FUNCTION_LINES, ' ' * 8)}"
        "    return inner\n\n"
        # at the limit, under a decorator that is not counted
        f"@staticmethod\ndef at_limit():\n{body(MAX_FUNCTION_LINES - 1, ' ' * 4)}",
        encoding="utf-8",
    )
    assert long_functions(planted.parent) == {
        "benchmarks/long.py::Chart.draw": MAX_FUNCTION_LINES + 1,
        "benchmarks/long.py::outer.inner": MAX_FUNCTION_LINES + 1,
        "benchmarks/long.py::outer": MAX_FUNCTION_LINES + 3,
    }


def test_the_core_has_few_loose_modules():
    loose = sorted(p.stem for p in (PACKAGE / "core").glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= MAX_LOOSE_MODULES, loose
