"""Every user mistake the issue lists, made for real through the CLI in a fresh folder.

Each one must end with one line on stderr naming the value and the fix, a non-zero exit
code, no traceback, and nothing written (the folder holds exactly what the test put there).
How fast each fails is measured in docs/reliability.md, not asserted here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.mistakes import MISTAKES


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_mistake_is_one_clear_line_and_writes_nothing(name: str, tmp_path: Path):
    files, argv, env, needles = MISTAKES[name]
    for rel, content in files.items():
        (tmp_path / rel).write_bytes(content)
    before = files_under(tmp_path)
    result = run_cli(*argv, cwd=tmp_path, env=env, input="hello\n", timeout=120)
    assert result.returncode not in (0, None), result.stdout[-500:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("workbench: error: ")
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert files_under(tmp_path) == before
