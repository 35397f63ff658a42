"""The README's two commands are the ones CI and users run; keep them in step."""

from __future__ import annotations

from tests.conftest import REPO


def _ci_command() -> str:
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return next(line for line in lines if line.startswith("python3 -m venv"))


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert _ci_command() in readme


def test_ci_prepares_the_machine_only_as_the_readme_says():
    """Before the README's command, .ci/run may only set itself up and install the
    PostgreSQL server and the Chromium the README asks for; the command is the last thing
    it runs."""
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert lines[-1] == _ci_command()
    steps = [line.strip() for line in lines[:-1] if line.strip() and not line.startswith("#")]
    allowed = ("set -euo pipefail", 'cd "$(dirname "$0")/.."', "export ", "if ", "fi")
    installs = [step for step in steps if not step.startswith(allowed)]
    assert len(installs) == 2 and all("apt-get install" in s for s in installs), installs
    packages = [s.split("--no-install-recommends")[1].split(">")[0].split() for s in installs]
    assert packages == [["postgresql"], ["chromium"]]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "`apt-get install postgresql chromium`" in readme


def test_readme_installs_the_cpu_torch_wheel_first():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    commands = [line for line in readme.splitlines() if line.startswith("python3 -m venv")]
    assert len(commands) >= 2
    for command in commands[:2]:
        assert "torch==2.13.0" in command
