"""The README's two commands are the ones CI, ``make`` and users run; keep them in step, and
keep every relative link of the README and of docs/ pointing at a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.paths import REPO


def _command_at(lines: list[str], first: int) -> list[str]:
    """The command that starts on line ``first``, with the lines its ``\\`` continues onto."""
    command = [lines[first]]
    while command[-1].endswith("\\"):
        command.append(lines[first + len(command)])
    return command


def _ci_command() -> list[str]:
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("python3 -m venv"))
    return _command_at(lines, first)


def _readme_commands() -> list[list[str]]:
    """The README's set-up commands, in order: the demo's, then the tests'."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    return [
        _command_at(lines, i) for i, line in enumerate(lines) if line.startswith("python3 -m venv")
    ]


def _test_steps() -> list[str]:
    """The README's test command, one step per ``&&``: install, ruff, ruff, mypy,
    lint-imports, pytest."""
    command = " ".join(line.removesuffix("\\") for line in _readme_commands()[1])
    return [step.strip() for step in command.split("&&")]


def test_ci_runs_the_readme_test_command():
    assert _readme_commands()[1] == _ci_command()


def test_ci_prepares_the_machine_only_as_the_readme_says():
    """Before the README's command, .ci/run may only set itself up and install the
    PostgreSQL server and the Chromium the README asks for; the command is the last thing
    it runs."""
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    command = _ci_command()
    assert lines[-len(command) :] == command
    steps = [
        line.strip() for line in lines[: -len(command)] if line.strip() and not line.startswith("#")
    ]
    allowed = ("set -euo pipefail", 'cd "$(dirname "$0")/.."', "export ", "if ", "fi")
    installs = [step for step in steps if not step.startswith(allowed)]
    assert len(installs) == 2, installs
    assert all("apt-get install" in s for s in installs), installs
    packages = [s.split("--no-install-recommends")[1].split(">")[0].split() for s in installs]
    assert packages == [["postgresql"], ["chromium"]]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "`apt-get install postgresql chromium`" in readme


def test_readme_installs_the_cpu_torch_wheel_first():
    commands = _readme_commands()
    assert len(commands) >= 2
    for command in commands[:2]:
        assert "torch==2.13.0" in command[0]


def test_the_readme_test_command_runs_the_suite_in_three_processes():
    """``-n 3`` is in the command, not in pyproject's addopts, so ``pytest -k NAME`` runs
    without xdist; ``--dist worksteal`` lets an idle process take queued tests from a busy
    one, so none waits alone at the end behind a long run."""
    assert _test_steps()[-1] == "HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -n 3 --dist worksteal"
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    addopts = next(line for line in pyproject.splitlines() if line.startswith("addopts"))
    assert "-n" not in addopts.split("=", 1)[1].replace('"', " ").split()


def _make_recipes() -> dict[str, list[str]]:
    recipes: dict[str, list[str]] = {}
    target = ""
    for line in (REPO / "Makefile").read_text(encoding="utf-8").splitlines():
        if line.startswith("\t"):
            recipes[target].append(line.strip())
        elif re.match(r"[\w-]+:", line) and not line.startswith("."):
            target = line.split(":", 1)[0]
            recipes[target] = []
    return recipes


def test_make_runs_the_readme_checks():
    """``make test`` is the README's suite; ``make test-fast`` the same without e2e/."""
    steps = _test_steps()
    recipes = _make_recipes()
    assert recipes["lint"] == [s for s in steps if "/ruff " in s or s.endswith("/lint-imports")]
    assert recipes["type"] == [s for s in steps if s.endswith("/mypy")]
    assert recipes["test"] == [steps[-1]]
    assert recipes["test-fast"] == [f'{steps[-1]} -m "not slow"']


#: ``[text](target)`` and ``![alt](target)``, the target up to a space or ``)``.
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    each space a ``-``."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return {_anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def broken_links(pages: list[Path], root: Path) -> list[str]:
    """Each relative link of ``pages`` to a file that does not exist, or to a heading that
    its page does not have, as ``page: target (why)``."""
    broken = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        for target in LINK.findall(text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                broken.append(f"{page.relative_to(root)}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{page.relative_to(root)}: {target} (no such heading)")
    return broken


def test_every_relative_link_of_the_readme_and_docs_resolves():
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    assert broken_links(pages, REPO) == []


def test_a_planted_broken_link_is_found(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# A page\n\n## What `--data` takes\n")
    readme = tmp_path / "README.md"
    readme.write_text(
        "[ok](docs/page.md) [ok](docs/page.md#what---data-takes) [web](https://example.org)\n"
        "[gone](docs/gone.md) [no heading](docs/page.md#nowhere)\n"
        "```\n[in code](not/checked.md)\n```\n"
    )
    assert broken_links([readme], tmp_path) == [
        "README.md: docs/gone.md (no such file)",
        "README.md: docs/page.md#nowhere (no such heading)",
    ]


def test_the_readme_stays_a_front_page():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    for page in sorted((REPO / "docs").glob("*.md")):
        assert f"(docs/{page.name})" in readme, f"the README links to no docs/{page.name}"


def test_the_readme_has_a_row_for_every_command():
    from workbench.cli.main import COMMANDS

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `workbench ([\w-]+)", readme, flags=re.MULTILINE)
    assert sorted(rows) == sorted(COMMANDS)
