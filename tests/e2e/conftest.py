"""The end-to-end tests: each trains a model (itself, or through a fixture that trains one)
or builds and installs the package. This folder marks them ``slow``, every one, so that
``-m "not slow"`` (``make test-fast``) is everything but e2e/; no test elsewhere is slow.

Also here: the one finished tiny run that only these tests read, and the fixtures they
share with another folder (imported from tests/helpers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.benchmarks import speed  # noqa: F401 (fixtures: pytest finds them by name here)
from tests.helpers.family_runs import model_folders  # noqa: F401
from tests.helpers.lab import lab_app, run_with_model  # noqa: F401
from tests.helpers.runs import FinishedRun, small

HERE = Path(__file__).resolve().parent


#: The modules whose tests take longest (20 to 65 s each in the README's test command:
#: docs/architecture.md's table), run first: pytest-xdist hands each process a share of
#: the tests in this order and an idle process takes queued ones, not a running one, so a
#: long test left to the end would run alone while the other processes idle.
LONGEST_FIRST = (
    "test_memory_plan_causal_runs.py", "test_memory_plan_runs.py", "test_sweep_runs.py",
    "test_secrets.py", "test_hub_runs.py", "test_live_processes.py",
    "test_speed_benchmark_runs.py", "test_sharded.py", "test_distributed.py",
    "test_serve_runs.py",
)  # fmt: skip


@pytest.hookimpl(tryfirst=True)  # before -m "not slow" deselects by the mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under this folder ``slow`` (the hook sees the whole session's items),
    and move the LONGEST_FIRST modules' tests to the front, in that order."""
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.slow)

    def rank(item: pytest.Item) -> int:
        name = Path(item.path).name
        inside = HERE in Path(item.path).resolve().parents
        return LONGEST_FIRST.index(name) if inside and name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: every other test keeps its place


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> FinishedRun:
    """One in-process ``small`` run (2 epochs), trained once for every test that reads what
    a finished run leaves instead of one training each. Nothing may write into it: a test
    that writes (a report, a second run, a resume) works on ``finished_run.copy_to(...)``."""
    from workbench.core.train import recipe
    from workbench.core.train.run_training import run_training

    handed: dict[str, list[Any]] = {}
    real_build = recipe.build_trainer

    def recording_build(config, model, tokenizer, train, validation, *args, **kwargs):
        handed.update(train=train, validation=validation)  # what the Trainer will see
        return real_build(config, model, tokenizer, train, validation, *args, **kwargs)

    events: list[Any] = []
    with pytest.MonkeyPatch.context() as patch:
        # A cache of its own: a session fixture is set up before the autouse one.
        patch.setenv("WORKBENCH_CACHE", str(tmp_path_factory.mktemp("finished_run_cache")))
        patch.setattr(recipe, "build_trainer", recording_build)
        result = run_training(small(tmp_path_factory.mktemp("finished_run")), events.append)
    assert result.status == "finished"
    return FinishedRun(result, events, handed)
