"""Every test the docs cite as ``module::test`` is a test in that module.

docs/reliability.md gives each fault the tests that inject it, and other pages may cite
tests the same way: ``test_faults::test_kill_9_then_resume_matches_an_uninterrupted_run``,
the module by its name (``test_faults``) or by its path (``e2e/test_faults.py``), then the
test. A parametrized id (``test_x[SIGTERM]``) names the function ``test_x``, and
``Class::test`` a test method. Tests move between modules as the suite is regrouped, and a
citation of a test that is not where it says sends the reader to nothing, so each one must
name one test module that defines that function. A failure lists each citation that does
not, as ``page:line``, with where a test of that name is now.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers.paths import REPO

#: ``[folder/]test_module[.py]::[Class::]test_name``; a parametrized id's ``[…]`` follows
#: the name and is not part of it.
CITATION = re.compile(
    r"(?<![\w/.-])(?P<folder>(?:[\w-]+/)*)(?P<module>test_\w+)(?:\.py)?::"
    r"(?:(?P<cls>[A-Z]\w*)::)?(?P<test>test_\w+)"
)
#: A dated record of measured runs: it names each test as the suite called it on the day
#: of the measurement, which is its point, so its names are not held to today's suite.
RECORDS = ("benchmarks/SUITE_TIMES.md",)


def cited_pages(root: Path) -> list[Path]:
    """The pages that cite tests: docs/, the README and the benchmarks' reports."""
    pages = [*sorted((root / "docs").rglob("*.md")), root / "README.md"]
    pages += sorted((root / "benchmarks").glob("*.md"))
    return [p for p in pages if p.is_file() and p.relative_to(root).as_posix() not in RECORDS]


def defined_tests(module: Path) -> set[str]:
    """The test functions ``module`` defines: ``test_x`` at its top level, ``Class::test_x``
    in a class."""
    names = set()
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(
                f"{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            )
    return names


def citations(root: Path) -> list[tuple[str, re.Match[str]]]:
    """Each citation of a test in the cited pages under ``root``, with its ``page:line``."""
    found = []
    for page in cited_pages(root):
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            where = f"{page.relative_to(root).as_posix()}:{number}"
            found += [(where, match) for match in CITATION.finditer(line)]
    return found


def bad_citations(root: Path) -> list[str]:
    """Each citation under ``root`` that names no test module, more than one, or a module
    that does not define the test, with where a test of that name is defined now."""
    modules = {
        path.relative_to(root).as_posix(): defined_tests(path)
        for path in sorted((root / "tests").rglob("test_*.py"))
    }
    bad = []
    for where, match in citations(root):
        folder, module, cls, test = match.group("folder", "module", "cls", "test")
        name = f"{cls}::{test}" if cls else test
        cited = f"{folder}{module}::{name}"
        candidates = [p for p in modules if f"/{p}".endswith(f"/{folder}{module}.py")]
        now = [p for p, tests in modules.items() if test in {t.split("::")[-1] for t in tests}]
        elsewhere = f" (a test of that name is in {', '.join(now)})" if now else ""
        if not candidates:
            bad.append(f"{where}: {cited}: no test module {folder}{module}.py{elsewhere}")
        elif len(candidates) > 1:
            named = f"{len(candidates)} modules have that name ({', '.join(candidates)})"
            bad.append(f"{where}: {cited}: {named}: name its folder")
        elif name not in modules[candidates[0]]:
            bad.append(f"{where}: {cited}: not in {candidates[0]}{elsewhere}")
    return bad


def test_every_test_the_docs_cite_is_where_they_say():
    assert len(citations(REPO)) >= 80  # reliability.md's, at least: the pattern finds them
    bad = bad_citations(REPO)
    assert bad == [], "\n".join(["tests the docs cite that are not there:", *bad])


def test_planted_bad_citations_are_each_found_with_their_line(tmp_path: Path):
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "e2e").mkdir()
    (tmp_path / "tests" / "unit" / "test_a.py").write_text(
        "def test_one():\n    assert 1\n\n\nclass TestGroup:\n    def test_two(self):\n"
        "        assert 1\n",
        encoding="utf-8",
    )
    (tmp_path / "tests" / "e2e" / "test_b.py").write_text(
        "def test_moved():\n    assert 1\n", encoding="utf-8"
    )
    (tmp_path / "tests" / "e2e" / "test_a.py").write_text("", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(
        "| fault | `unit/test_a::test_one[SIGTERM,SIGINT]`, "
        "`unit/test_a.py::TestGroup::test_two` |\n"
        "`tests/e2e/test_b.py::test_moved`, not a test: `aten::mm`, `test_a.py`\n"
        "`unit/test_a::test_moved`, `test_gone::test_one`\n"
        "`test_a::test_one`, `unit/test_a::TestGroup::test_one`\n",
        encoding="utf-8",
    )
    (tmp_path / "README.md").write_text("`e2e/test_b::test_two`\n", encoding="utf-8")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "SUITE_TIMES.md").write_text(
        "`e2e/test_b.py::test_as_it_was_called` | 12.3 s\n", encoding="utf-8"
    )
    assert len(citations(tmp_path)) == 8
    assert bad_citations(tmp_path) == [
        "docs/page.md:3: unit/test_a::test_moved: not in tests/unit/test_a.py "
        "(a test of that name is in tests/e2e/test_b.py)",
        "docs/page.md:3: test_gone::test_one: no test module test_gone.py "
        "(a test of that name is in tests/unit/test_a.py)",
        "docs/page.md:4: test_a::test_one: 2 modules have that name (tests/e2e/test_a.py, "
        "tests/unit/test_a.py): name its folder",
        "docs/page.md:4: unit/test_a::TestGroup::test_one: not in tests/unit/test_a.py "
        "(a test of that name is in tests/unit/test_a.py)",
        "README.md:1: e2e/test_b::test_two: not in tests/e2e/test_b.py "
        "(a test of that name is in tests/unit/test_a.py)",
    ]
