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


@pytest.hookimpl(tryfirst=True)  # before -m "not slow" deselects by the mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under this folder ``slow`` (the hook sees the whole session's items)."""
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> FinishedRun:
    """One in-process ``small`` run (2 epochs), trained once for every test that reads what
    a finished run leaves instead of one training each. Nothing may write into it: a test
    that writes (a report, a second run, a resume) works on ``finished_run.copy_to(...)``."""
    from workbench.core.train import trainer
    from workbench.core.train.run_training import run_training

    handed: dict[str, list[Any]] = {}
    real_build = trainer.build_trainer

    def recording_build(config, model, tokenizer, train, validation, *args, **kwargs):
        handed.update(train=train, validation=validation)  # what the Trainer will see
        return real_build(config, model, tokenizer, train, validation, *args, **kwargs)

    events: list[Any] = []
    with pytest.MonkeyPatch.context() as patch:
        # A cache of its own: a session fixture is set up before the autouse one.
        patch.setenv("WORKBENCH_CACHE", str(tmp_path_factory.mktemp("finished_run_cache")))
        patch.setattr(trainer, "build_trainer", recording_build)
        result = run_training(small(tmp_path_factory.mktemp("finished_run")), events.append)
    assert result.status == "finished"
    return FinishedRun(result, events, handed)
