"""Every user mistake the issue lists, made for real through the CLI in a fresh folder.

Each one must end with one line on stderr naming the value and the fix, a non-zero exit
code, no traceback, and nothing written (the folder holds exactly what the test put there).
How fast each fails is measured in docs/reliability.md, not asserted here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import imports_of, read_at_import, run_cli
from tests.helpers.mistakes import MISTAKES


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_mistake_is_one_clear_line_and_writes_nothing(cli, name: str, tmp_path: Path):
    files, argv, env, needles = MISTAKES[name]
    for rel, content in files.items():
        (tmp_path / rel).write_bytes(content)
    before = files_under(tmp_path)
    # A mistake in the Hub's variables needs a new interpreter: they are read at import.
    if read_at_import(env):
        result = run_cli(*argv, cwd=tmp_path, env=env, input="hello\n", timeout=120)
    else:
        result = cli(*argv, cwd=tmp_path, env=env, input="hello\n")
    assert result.returncode not in (0, None), result.stdout[-500:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("workbench: error: ")
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert files_under(tmp_path) == before


#: The mistakes in a data file a first look at its start finds (workbench.core.data.sources).
DATA_FILE_MISTAKES = [
    "dataset file missing",
    "dataset URL with a password",
    "test data file missing",
    "dataset file empty",
    "dataset not UTF-8",
    "dataset lacks columns",
]


@pytest.mark.parametrize("name", DATA_FILE_MISTAKES)
def test_a_data_file_mistake_is_refused_before_torch_is_imported(name: str, tmp_path: Path):
    """The same one line, from the first look at the file, not after the model's config has
    imported torch and transformers (seconds before the line, on every such mistake). A new
    interpreter: what the command imports is the point."""
    files, argv, _, needles = MISTAKES[name]
    for rel, content in files.items():
        (tmp_path / rel).write_bytes(content)
    done = imports_of(*argv, modules=("torch", "transformers"), cwd=tmp_path)
    assert (done.returncode, done.imported) == (2, []), (done.stdout, done.stderr[-2000:])
    assert all(needle in done.stderr for needle in needles), done.stderr
