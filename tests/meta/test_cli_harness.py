"""The command line as the tests run it (tests/helpers/cli.py): ``cli`` runs a command in the
test's own process and must leave that process as it found it, or a test would pass or
fail by what ran before it; and no unit test drives the command line (tests/unit/ holds
the core's parts, tests/cli/ the commands).

Each guard is proven on a command that changes what the guard keeps: a stand-in trainer
that installs a signal handler, sets a variable, changes folder, adds a log handler or a
warning filter, sets torch's threads or leaves a thread running, as a real command
might."""

from __future__ import annotations

import ast
import logging
import os
import re
import signal
import threading
import warnings
from pathlib import Path

import pytest

from tests.helpers import cli as cli_module
from tests.helpers.cli import TINY_DEMO_ARGS
from tests.helpers.fake_training import fake_run_training
from tests.helpers.paths import TESTS
from tests.helpers.runs import tiny_toml


def test_the_exit_status_is_the_commands_or_argparses(cli, tmp_path: Path):
    helped = cli("--help")
    assert helped.returncode == 0
    assert "usage: workbench" in helped.stdout
    wrong = cli("train", "--epochs", cwd=tmp_path)  # argparse: a flag without its value
    assert wrong.returncode == 2
    assert "expected one argument" in wrong.stderr
    refused = cli("translate", "--model", "./nowhere", "hi", cwd=tmp_path)  # main's own
    assert refused.returncode == 2
    assert refused.stderr.startswith("workbench: error: ")


def test_a_variable_read_at_import_is_refused_with_the_way_out(cli):
    with pytest.raises(ValueError, match="HF_ENDPOINT: read when a library is imported"):
        cli("presets", env={"HF_ENDPOINT": "http://127.0.0.1:9"})
    assert cli("presets", env={"HF_HUB_OFFLINE": os.environ["HF_HUB_OFFLINE"]}).returncode == 0


def planted_trainer(monkeypatch: pytest.MonkeyPatch, plant) -> dict[str, object]:
    """The stand-in trainer, after ``plant(seen)`` ran inside the command (it records what
    it saw in ``seen``)."""
    from workbench.core.train import run_training as training_module

    seen: dict[str, object] = {}

    def train(*args, **kwargs):
        plant(seen)
        return fake_run_training(*args, **kwargs)

    monkeypatch.setattr(training_module, "run_training", train)
    return seen


def train(cli, folder: Path):
    (folder / "tiny.toml").write_text(tiny_toml(epochs=1), encoding="utf-8")
    return cli(*TINY_DEMO_ARGS, cwd=folder)


def test_the_process_is_left_as_the_command_found_it(cli, tmp_path: Path, monkeypatch):
    import torch

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    handler = logging.StreamHandler()

    def plant(seen: dict[str, object]) -> None:
        seen["SIGINT"] = signal.getsignal(signal.SIGINT)  # train's own, by now
        os.environ["WORKBENCH_PLANTED"] = "1"
        os.chdir(elsewhere)
        logging.getLogger().addHandler(handler)
        logging.getLogger("transformers").setLevel(logging.CRITICAL)
        warnings.filterwarnings("ignore", message="planted")
        torch.set_num_threads(torch.get_num_threads() + 1)

    seen = planted_trainer(monkeypatch, plant)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    cwd, threads = os.getcwd(), torch.get_num_threads()
    level = logging.getLogger("transformers").level
    done = train(cli, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert seen["SIGINT"] is not handlers[signal.SIGINT]  # the command did install one
    assert {sig: signal.getsignal(sig) for sig in handlers} == handlers
    assert "WORKBENCH_PLANTED" not in os.environ
    assert os.getcwd() == cwd
    assert handler not in logging.getLogger().handlers
    assert logging.getLogger("transformers").level == level
    assert not [f for f in warnings.filters if f[1] is not None and f[1].pattern == "planted"]
    assert torch.get_num_threads() == threads


def test_a_thread_the_command_leaves_running_fails_it(cli, tmp_path: Path, monkeypatch):
    release = threading.Event()

    def plant(seen: dict[str, object]) -> None:
        threading.Thread(target=release.wait, name="planted-thread").start()

    planted_trainer(monkeypatch, plant)
    monkeypatch.setattr(cli_module, "THREAD_GRACE_SECONDS", 0.1)
    try:
        with pytest.raises(AssertionError, match="left threads running: \\['planted-thread'\\]"):
            train(cli, tmp_path)
    finally:
        release.set()


#: What drives the command line in a test module: its entry point, the tests' runners of
#: it (the ``cli`` fixture among them), or ``python -m workbench``.
DRIVERS = ("workbench.cli.main", "tests.helpers.cli", "tests.helpers.sweep_workers")
#: The same spelled out in a string: code a test hands a new interpreter, or its argv.
SPELLED = re.compile(r'workbench\.cli(\.main)? import main|"-m", "workbench"')


def command_line_drivers(folder: Path) -> list[str]:
    """Each test module under ``folder`` that drives the command line, and how."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        names = []
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names += [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names += [f"fixture {a.arg}" for a in node.args.args if a.arg == "cli"]
        hits = [n for n in names if n.startswith((*DRIVERS, "fixture cli"))]
        hits += [m.group(0) for m in SPELLED.finditer(text)]
        if hits:
            found.append(f"{path.relative_to(folder).as_posix()}: {hits[0]}")
    return found


def test_no_unit_test_drives_the_command_line(tmp_path: Path):
    assert command_line_drivers(TESTS / "unit") == []
    planted = {
        "test_a.py": "from workbench.cli import main\n",
        "test_b.py": "from tests.helpers.cli import run_cli\n",
        "test_c.py": 'import sys\nsubprocess.run([sys.executable, "-m", "workbench"])\n',
        "test_d.py": "code = 'from workbench.cli.main import main'\n",
        "test_e.py": "def test_it(cli, tmp_path):\n    assert cli('--help')\n",
    }
    for name, text in planted.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert command_line_drivers(tmp_path) == [
        "test_a.py: workbench.cli.main",
        "test_b.py: tests.helpers.cli.run_cli",
        'test_c.py: "-m", "workbench"',
        "test_d.py: workbench.cli.main import main",
        "test_e.py: fixture cli",
    ]
