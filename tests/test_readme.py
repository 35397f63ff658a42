"""The README's two commands are the ones CI and users run; keep them in step."""

from __future__ import annotations

from tests.conftest import REPO


def _ci_command() -> str:
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return next(line for line in lines if line.startswith("python3 -m venv"))


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert _ci_command() in readme


def test_readme_installs_the_cpu_torch_wheel_first():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    commands = [line for line in readme.splitlines() if line.startswith("python3 -m venv")]
    assert len(commands) >= 2
    for command in commands[:2]:
        assert "torch==2.13.0" in command
