"""Every test can fail: each one checks something that a wrong result breaks.

A test checks something when its own code (not a function it defines and never calls) has

- an ``assert`` statement, or a ``raise`` of an exception (a bare re-raise only passes on
  what something else raised);
- ``pytest.raises``, ``pytest.warns``, ``pytest.deprecated_call`` or ``pytest.fail``;
- a library's assertion: an ``assert_*`` function of a ``testing`` module
  (``np.testing.assert_allclose``, ``torch.testing.assert_close``);
- or a call of a function that checks something by these same rules: one of its module,
  one it defines, or one imported from ``tests`` (``tests.helpers.tui.wait_for``), followed
  through the helpers it calls in turn.

Words are not checks: ``assert`` in a string, a comment or a name (``assert_nothing_var``)
is not one, and ``pytest.approx`` or ``snap_compare`` only compare inside an ``assert``.
A helper is found by the name it is called by, so a function a fixture hands the test is
not followed: such a test needs a check of its own.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.paths import TESTS

#: pytest's functions that fail a test by themselves.
PYTEST_CHECKS = frozenset({"raises", "warns", "deprecated_call", "fail"})
Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class Module:
    """One module under the tests' folder: its functions and the names it calls them by."""

    tree: ast.Module
    #: A name the module calls → (the module that defines it, the function's name).
    names: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: A name bound to a module of the tests (``from tests.helpers import tui``).
    modules: dict[str, str] = field(default_factory=dict)
    #: Names that fail a test by themselves: pytest's (``from pytest import raises``) and a
    #: ``testing`` module's ``assert_*`` (``from numpy.testing import assert_allclose``).
    assertions: set[str] = field(default_factory=set)


def read_modules(folder: Path) -> dict[str, Module]:
    """Every module under ``folder`` (the ``tests`` package), by dotted name."""
    modules = {}
    for path in sorted(folder.rglob("*.py")):
        dotted = ".".join(("tests", *path.relative_to(folder).with_suffix("").parts))
        modules[dotted] = Module(ast.parse(path.read_text(encoding="utf-8")))
    for dotted, module in modules.items():
        for node in module.tree.body:
            if isinstance(node, Function):
                module.names[node.name] = (dotted, node.name)
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    bound = alias.asname or alias.name
                    if f"{node.module}.{alias.name}" in modules:
                        module.modules[bound] = f"{node.module}.{alias.name}"
                    elif node.module in modules:
                        module.names[bound] = (node.module, alias.name)
                    elif is_assertion(node.module, alias.name):
                        module.assertions.add(bound)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in modules:
                        module.modules[alias.asname] = alias.name
    return modules


def is_assertion(module: str, name: str) -> bool:
    """Whether ``module.name`` fails a test by itself: pytest's, or a testing module's."""
    if module == "pytest":
        return name in PYTEST_CHECKS
    return module.split(".")[-1] == "testing" and name.startswith("assert_")


def dotted_name(node: ast.expr) -> str:
    """``np.testing`` for the expression ``np.testing``; "" for what is not a dotted name."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = dotted_name(node.value)
        return f"{owner}.{node.attr}" if owner else ""
    return ""


def own_nodes(function: Function) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body, not those of the functions it defines."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, Function):
            pending.extend(ast.iter_child_nodes(node))


class Checks:
    """Which functions of the tests' modules check something, by the module's rules."""

    def __init__(self, modules: dict[str, Module]):
        self.modules = modules
        self.known: dict[int, bool] = {}

    def function(self, dotted: str, name: str) -> Function | None:
        """The function ``name`` at the top of module ``dotted``; None outside the tests."""
        module = self.modules.get(dotted)
        found = [n for n in (module.tree.body if module else []) if isinstance(n, Function)]
        return next((n for n in found if n.name == name), None)

    def checks(self, function: Function, dotted: str) -> bool:
        """Whether ``function`` (of module ``dotted``) checks something."""
        key = id(function)
        if key not in self.known:
            self.known[key] = False  # a helper that calls itself checks nothing by that
            self.known[key] = self._checks(function, dotted)
        return self.known[key]

    def _checks(self, function: Function, dotted: str) -> bool:
        nested = {n.name: n for n in ast.walk(function) if isinstance(n, Function)}
        for node in own_nodes(function):
            if isinstance(node, ast.Assert) or (isinstance(node, ast.Raise) and node.exc):
                return True
            if isinstance(node, ast.Call) and self._call_checks(node.func, nested, dotted):
                return True
        return False

    def _call_checks(self, called: ast.expr, nested: dict[str, Function], dotted: str) -> bool:
        """Whether calling ``called`` from module ``dotted`` checks something, with the
        functions the caller defines in ``nested``."""
        module = self.modules[dotted]
        if isinstance(called, ast.Name):
            if called.id in module.assertions:
                return True
            if called.id in nested:
                return self.checks(nested[called.id], dotted)
            home, name = module.names.get(called.id, ("", ""))
        elif isinstance(called, ast.Attribute):
            owner = dotted_name(called.value)
            if is_assertion(owner, called.attr):
                return True
            home, name = module.modules.get(owner, ""), called.attr
        else:
            return False
        helper = self.function(home, name)
        return helper is not None and self.checks(helper, home)


def unchecked_tests(folder: Path) -> list[str]:
    """Each test under ``folder`` (the ``tests`` package) that checks nothing, as
    ``path::test``: a ``test_*`` function of a ``test_*`` module, or a ``test_*`` method of
    its ``Test*`` classes."""
    modules = read_modules(folder)
    checks = Checks(modules)
    found = []
    for dotted, module in modules.items():
        path = "/".join(dotted.split(".")[1:]) + ".py"
        if not path.split("/")[-1].startswith("test_"):
            continue
        for node in module.tree.body:
            tests = [(node.name, node)] if isinstance(node, Function) else []
            if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                tests = [
                    (f"{node.name}::{m.name}", m) for m in node.body if isinstance(m, Function)
                ]
            for name, test in tests:
                if test.name.startswith("test_") and not checks.checks(test, dotted):
                    found.append(f"{path}::{name}")
    return found


def test_every_test_checks_something():
    assert unchecked_tests(TESTS) == []


PLANTED_HELPERS = '''
def check_it(value):
    assert value


def via_check(value):
    check_it(value)


def looks_busy(value):
    """assert value"""
    return value
'''

PLANTED_TESTS = """
import numpy as np
import pytest
from numpy.testing import assert_array_equal
from pytest import raises

from tests.helpers import planted_helpers
from tests.helpers.planted_helpers import check_it, looks_busy, via_check


def test_asserts():
    assert 1 + 1 == 2


def test_raises_by_name():
    with raises(ZeroDivisionError):
        1 / 0


def test_raises():
    with pytest.raises(ZeroDivisionError):
        1 / 0


def test_fails_on_a_branch(value=1):
    if value != 1:
        pytest.fail("not one")


def test_raises_an_error(value=1):
    if value != 1:
        raise AssertionError(value)


def test_numpy_asserts():
    np.testing.assert_allclose([1.0], [1.0])


def test_numpy_asserts_by_name():
    assert_array_equal([1], [1])


def test_a_helper_asserts():
    check_it(1)


def test_a_helper_of_a_helper_asserts():
    via_check(1)


def test_through_the_module():
    planted_helpers.check_it(1)


def test_a_nested_check_it_calls():
    def check():
        assert True

    check()


async def test_awaits_a_check():
    check_it(1)


class TestGroup:
    def test_in_a_class(self):
        assert True

    def test_in_a_class_unchecked(self):
        looks_busy(1)


def test_only_says_assert():
    print("assert the result")  # assert it


def test_only_a_name():
    assert_nothing_var = 1 + 1
    looks_busy(assert_nothing_var)


def test_a_call_named_like_an_assertion():
    assert_nothing_var(1)


def test_approx_alone():
    pytest.approx(1.0)


def test_a_nested_check_never_called():
    def check():
        assert True

    looks_busy(check)


def test_only_reraises():
    try:
        looks_busy(1)
    except ValueError:
        raise


def test_a_helper_that_only_mentions_assert():
    looks_busy(1)


def test_nothing():
    run()
"""


def test_planted_tests_that_check_nothing_are_found(tmp_path: Path):
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "planted_helpers.py").write_text(PLANTED_HELPERS, "utf-8")
    (tmp_path / "unit").mkdir()
    (tmp_path / "unit" / "test_planted.py").write_text(PLANTED_TESTS, "utf-8")
    assert unchecked_tests(tmp_path) == [
        "unit/test_planted.py::TestGroup::test_in_a_class_unchecked",
        "unit/test_planted.py::test_only_says_assert",
        "unit/test_planted.py::test_only_a_name",
        "unit/test_planted.py::test_a_call_named_like_an_assertion",
        "unit/test_planted.py::test_approx_alone",
        "unit/test_planted.py::test_a_nested_check_never_called",
        "unit/test_planted.py::test_only_reraises",
        "unit/test_planted.py::test_a_helper_that_only_mentions_assert",
        "unit/test_planted.py::test_nothing",
    ]
