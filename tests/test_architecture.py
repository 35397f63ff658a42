"""The layering the code relies on, read from the source with ``ast`` (lazy imports too).

- ``workbench/core`` imports only ``workbench.core`` and ``workbench.errors``: the TUI and
  the CLI are adapters over it, so nothing in it may reach into a front end.
- ``workbench/tui`` does not import ``workbench.cli``: two front ends, one core.
- No two workbench modules import each other, even through an import inside a function:
  a cycle hidden that way still means two modules that cannot be read apart.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import workbench

PACKAGE = Path(workbench.__path__[0])


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
    return {name: {i for i in imports_of(path, root) if i in modules and i != name}
            for name, path in modules.items()}


def forbidden(edges: dict[str, set[str]], prefix: str, allowed: tuple[str, ...]) -> list[str]:
    """``importer -> imported`` for every import out of ``prefix`` that is not allowed."""
    return sorted(f"{src} -> {dst}" for src, dsts in edges.items() if src.startswith(prefix)
                  for dst in dsts if not dst.startswith(allowed))


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
    return sorted(f"{module_name(p, root)} -> {lib}" for p in (root / "core").rglob("*.py")
                  for lib in third_party_imports(p) & {"rich", "textual"})


def test_the_core_imports_no_terminal_library():
    assert terminal_libraries() == []


def test_the_tui_does_not_import_the_cli():
    wrong = [e for e in forbidden(graph(), "workbench.tui", ("workbench.tui",))
             if e.split(" -> ")[1].startswith("workbench.cli")]
    assert wrong == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``edges`` (each as a path from a module back to itself)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt):], nxt])
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
    return {src: {d for d in dsts if not d.startswith(src + ".") and d != "workbench"}
            for src, dsts in edges.items()}


def test_no_module_imports_one_that_imports_it_back():
    assert cycles(without_package_imports(graph())) == []


@pytest.mark.parametrize(("planted", "source"), [
    ("core/planted.py", "from workbench.cli.options import DEFAULT_MODEL_DIR\n"),
    ("core/planted.py", "def later():\n    import workbench.cli.headless\n"),
    ("core/planted.py", "from workbench.tui.app import WorkbenchApp\n"),
    ("tui/planted.py", "from workbench.cli import main\n"),
    ("core/planted.py", "from workbench.core import run_folder\n"),  # importing it back
    ("core/planted.py", "def later():\n    from rich.text import Text\n"),
])
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
        assert any({"workbench.core.planted", "workbench.core.run_folder"} == set(cycle)
                   for cycle in cycles(without_package_imports(edges)))
    elif planted.startswith("core/"):
        assert forbidden(edges, "workbench.core", ("workbench.core", "workbench.errors"))
    else:
        assert forbidden(edges, "workbench.tui", ("workbench.tui", "workbench.core",
                                                  "workbench.errors"))


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
    assert len(modules) >= 10 and "workbench.core.report.render" in modules  # packages too
