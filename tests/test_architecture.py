"""The layering the code relies on, read from the source with ``ast`` (lazy imports too).

- ``workbench/core`` imports only ``workbench.core`` and ``workbench.errors``: the TUI and
  the CLI are adapters over it, so nothing in it may reach into a front end.
- ``workbench/tui`` does not import ``workbench.cli``: two front ends, one core.
- No two workbench modules import each other, even through an import inside a function:
  a cycle hidden that way still means two modules that cannot be read apart.
- Inside the core, the packages form one chain (:data:`CHAIN`, bottom first): a package
  imports only the loose modules (:data:`LOOSE`) and the packages below it, and a loose
  module imports only loose modules. ``views`` (every wording) imports no torch, and torch
  is imported only in the packages that run a model (:data:`TORCH_PACKAGES`).
- Every core package says what it owns in its docstring, and docs/architecture.md's map of
  the code names every core module.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import workbench

PACKAGE = Path(workbench.__path__[0])
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"

#: The core's packages, bottom first: each may import the ones before it, never after.
CHAIN = (
    "views",
    "live",
    "data",
    "model",
    "comet",
    "translate",
    "evaluate",
    "train",
    "attention",
    "lab",
    "report",
    "experiments",
)
#: The core's base, which every package may import: the loose modules and the two base
#: packages (``config``, ``records``). They import only each other (and errors).
LOOSE = (
    "atomic",
    "config",
    "decoding",
    "events",
    "languages",
    "records",
    "run_folder",
)
#: The packages that run a model, the only ones that may import torch or transformers.
TORCH_PACKAGES = ("model", "comet", "translate", "train", "attention", "lab")


def module_name(path: Path, root: Path = PACKAGE) -> str:
    """``workbench/core/report/build.py`` -> ``workbench.core.report.build``."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path = PACKAGE) -> set[str]:
    """Every ``workbench`` module that ``path`` imports, anywhere in the file."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            # ``from workbench.cli import attention`` imports the module cli.attention
            found.update(f"{base}.{a.name}" for a in node.names)
    return {name for name in found if name == "workbench" or name.startswith("workbench.")}


def graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the workbench modules it imports (names that are not modules dropped)."""
    modules = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    return {
        name: {i for i in imports_of(path, root) if i in modules and i != name}
        for name, path in modules.items()
    }


def forbidden(edges: dict[str, set[str]], prefix: str, allowed: tuple[str, ...]) -> list[str]:
    """``importer -> imported`` for every import out of ``prefix`` that is not allowed."""
    return sorted(
        f"{src} -> {dst}"
        for src, dsts in edges.items()
        if src.startswith(prefix)
        for dst in dsts
        if not dst.startswith(allowed)
    )


def test_the_core_imports_only_core_and_errors():
    assert forbidden(graph(), "workbench.core", ("workbench.core", "workbench.errors")) == []


def third_party_imports(path: Path) -> set[str]:
    """The top-level names of every package ``path`` imports, anywhere in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add((node.module or "").split(".")[0])
    return found


def terminal_libraries(root: Path = PACKAGE) -> list[str]:
    """Core modules that import Rich or Textual (terminal rendering belongs to front ends)."""
    return sorted(
        f"{module_name(p, root)} -> {lib}"
        for p in (root / "core").rglob("*.py")
        for lib in third_party_imports(p) & {"rich", "textual"}
    )


def test_the_core_imports_no_terminal_library():
    assert terminal_libraries() == []


def test_the_tui_does_not_import_the_cli():
    wrong = [
        e
        for e in forbidden(graph(), "workbench.tui", ("workbench.tui",))
        if e.split(" -> ")[1].startswith("workbench.cli")
    ]
    assert wrong == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``edges`` (each as a path from a module back to itself)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    return found


def without_package_imports(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The edges minus a package importing its own submodules (``workbench.cli`` re-exports
    ``main``), which is how packages work rather than a cycle between two modules."""
    return {
        src: {d for d in dsts if not d.startswith(src + ".") and d != "workbench"}
        for src, dsts in edges.items()
    }


def test_no_module_imports_one_that_imports_it_back():
    assert cycles(without_package_imports(graph())) == []


@pytest.mark.parametrize(
    ("planted", "source"),
    [
        ("core/planted.py", "from workbench.cli.options import DEFAULT_MODEL_DIR\n"),
        ("core/planted.py", "def later():\n    import workbench.cli.headless\n"),
        ("core/planted.py", "from workbench.tui.app import WorkbenchApp\n"),
        ("tui/planted.py", "from workbench.cli import main\n"),
        ("core/planted.py", "from workbench.core import run_folder\n"),  # importing it back
        ("core/planted.py", "def later():\n    from rich.text import Text\n"),
    ],
)
def test_the_checks_fail_for_a_planted_violation(tmp_path: Path, planted: str, source: str):
    """A copy of the package with one bad import added: each rule must catch it."""
    import shutil

    root = tmp_path / "workbench"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__", "*.tcss"))
    (root / planted).write_text(source, encoding="utf-8")
    if "core import run_folder" in source:
        with (root / "core" / "run_folder.py").open("a", encoding="utf-8") as fh:
            fh.write("\n\ndef _back():\n    from workbench.core import planted  # noqa\n")
    edges = graph(root)
    if "rich" in source:
        assert terminal_libraries(root) == ["workbench.core.planted -> rich"]
    elif "core import run_folder" in source:
        assert any(
            {"workbench.core.planted", "workbench.core.run_folder"} == set(cycle)
            for cycle in cycles(without_package_imports(edges))
        )
    elif planted.startswith("core/"):
        assert forbidden(edges, "workbench.core", ("workbench.core", "workbench.errors"))
    else:
        assert forbidden(
            edges, "workbench.tui", ("workbench.tui", "workbench.core", "workbench.errors")
        )


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
    assert "workbench.core.report.render" in modules  # packages too


def core_part(module: str) -> str | None:
    """``workbench.core.train.trainer`` -> ``train``; a loose module -> its own name; the
    core package itself -> None."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["workbench", "core"] else None


def chain_violations(edges: dict[str, set[str]]) -> list[str]:
    """Core imports that go up the chain, or out of a loose module into a package."""
    wrong = []
    for src, dsts in edges.items():
        here = core_part(src)
        if here is None:
            continue
        for dst in dsts:
            there = core_part(dst)
            if there is None or there == here:
                continue
            if here in LOOSE:
                ok = there in LOOSE
            elif here in CHAIN:
                ok = there in LOOSE or (there in CHAIN and CHAIN.index(there) < CHAIN.index(here))
            else:
                ok = False  # a core module that is neither loose nor in a package of the chain
            if not ok:
                wrong.append(f"{src} -> {dst}")
    return sorted(wrong)


def test_the_core_packages_form_one_chain():
    assert chain_violations(graph()) == []


def test_every_core_module_is_loose_or_in_a_package_of_the_chain():
    parts = {core_part(name) for name in graph()} - {None}
    assert parts == set(LOOSE) | set(CHAIN)


def torch_imports(root: Path = PACKAGE) -> list[str]:
    """Core modules outside :data:`TORCH_PACKAGES` that import torch or transformers."""
    return sorted(
        f"{module_name(p, root)} -> {lib}"
        for p in (root / "core").rglob("*.py")
        if core_part(module_name(p, root)) not in TORCH_PACKAGES
        for lib in third_party_imports(p) & {"torch", "transformers"}
    )


def test_torch_is_imported_only_where_a_model_runs():
    assert torch_imports() == []


def test_every_core_package_says_what_it_owns():
    for package in CHAIN:
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
    ("planted", "source", "rule"),
    [
        ("core/views/planted.py", "from workbench.core.train.trainer import fine_tune\n", "chain"),
        (
            "core/data/planted.py",
            "def later():\n    from workbench.core.report import build\n",
            "chain",
        ),
        (
            "core/config/build.py",
            "\n\ndef later():\n    from workbench.core.views import numbers\n",
            "chain",
        ),
        ("core/views/planted.py", "import torch\n", "torch"),
        (
            "core/evaluate/planted.py",
            "def later():\n    from transformers import AutoModel\n",
            "torch",
        ),
    ],
)
def test_the_package_rules_fail_for_a_planted_violation(
    tmp_path: Path, planted: str, source: str, rule: str
):
    """A copy of the package with one bad import added: the chain and torch rules catch it."""
    import shutil

    root = tmp_path / "workbench"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__", "*.tcss"))
    target = root / planted
    # An existing module gets the import appended (a loose module reaching into a package).
    before = target.read_text(encoding="utf-8") if target.exists() else ""
    target.write_text(before + source, encoding="utf-8")
    name = module_name(target, root)
    if rule == "chain":
        assert any(v.startswith(f"{name} -> ") for v in chain_violations(graph(root)))
    else:
        assert [v for v in torch_imports(root) if v.startswith(f"{name} -> ")]


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


def unchecked_tests(folder: Path) -> list[str]:
    """Test functions in ``folder`` that can never fail on a wrong result: no ``assert``,
    no ``pytest.raises``, no snapshot comparison and no :func:`tests.conftest.wait_for`
    (which fails when its state is not reached)."""
    checks = ("assert", "raises", "snap_compare", "wait_for")
    found = []
    for path in sorted(folder.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_test = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if is_test and node.name.startswith("test_"):
                body = ast.unparse(node)
                if not any(check in body for check in checks):
                    found.append(f"{path.name}::{node.name}")
    return found


def test_every_test_checks_something(tmp_path: Path):
    assert unchecked_tests(PACKAGE.parent / "tests") == []
    (tmp_path / "test_planted.py").write_text("def test_nothing():\n    run()\n", "utf-8")
    assert unchecked_tests(tmp_path) == ["test_planted.py::test_nothing"]


#: The size a module stays under, so that it reads in one sitting and says one thing.
MAX_MODULE_LINES = 400
#: At most this many loose modules beside the core's packages (``__init__`` not counted).
MAX_LOOSE_MODULES = 6


def test_modules_stay_small_and_the_core_has_few_loose_modules():
    long = {
        p.relative_to(PACKAGE.parent).as_posix(): n
        for p in sorted(PACKAGE.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) >= MAX_MODULE_LINES
    }
    assert long == {}
    loose = sorted(p.stem for p in (PACKAGE / "core").glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= MAX_LOOSE_MODULES, loose
    assert {name for name in LOOSE if (PACKAGE / "core" / f"{name}.py").exists()} == set(loose)
