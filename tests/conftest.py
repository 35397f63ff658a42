"""What every test folder shares: offline mode, one torch thread, a private cache per test,
the fixtures of tests/helpers/fixtures.py (the HSK pairs, a tiny Marian model, the Hub
look-alike, the family models, the stand-in trainer), and ``cli``, the command line run in
the test's process (tests/helpers/cli.py).

The fixtures are imported here, not named in ``pytest_plugins``: pytest reads that only in
the rootdir's conftest, and this one sits in tests/. A folder's own conftest.py holds the
fixtures only its tests use."""

from __future__ import annotations

import os
import sys

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# One CPU thread for torch, here and in every subprocess (they inherit the environment):
# a 32-wide model gains nothing from more, and on a busy machine OpenMP threads that wait
# for each other made one tiny decode 10-20 times slower (1.8 s against 35 s measured).
# Set before torch is imported: the count is read once, at import.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# OpenMP threads that wait for work sleep instead of spinning. CTranslate2 takes one
# thread a core, and three test processes share two cores: a spinning thread burns the
# CPU its sibling processes need.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from tests.helpers.cli import cli  # noqa: F401 (a fixture: pytest finds it by name here)
from tests.helpers.fixtures import (  # noqa: F401 (fixtures: pytest finds them by name here)
    causal_models,
    fake_training,
    family_models,
    hsk_pairs,
    hub_server,
    metricx_models,
    pairs_file,
    served_hub,
    tiny_model_dir,
)

#: torch's threads in every test (the variable above).
TORCH_THREADS = int(os.environ["OMP_NUM_THREADS"])


#: How many modules were loaded when the collector last froze what was alive.
_frozen_at = {"modules": 0}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Freeze what is alive (gc.freeze) whenever a test has imported modules since the last
    freeze, before the next test's fixtures are made.

    A run calls ``gc.collect()`` three times (accelerate's ``free_memory`` twice, the
    Trainer's release once), and each full collection walks every object the process holds:
    in a test process that has imported torch, transformers, datasets and Textual, about
    half a million, 0.3 to 0.5 s a collection. Measured: tests/e2e/test_training.py alone
    took 16.0 s of user CPU without the freeze and 10.2 s with it.
    Frozen objects are skipped by the collector. The garbage of earlier tests is collected
    before each freeze; what is alive at one (modules, session and module fixtures) stays
    for the rest of the process, as it mostly would anyway. A freeze follows only a test that
    imported a module, so the objects a test makes are rarely frozen."""
    import gc

    if len(sys.modules) > _frozen_at["modules"]:
        gc.collect()
        gc.freeze()
        _frozen_at["modules"] = len(sys.modules)


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory: pytest.TempPathFactory):
    """A cache for what module and session fixtures run, which start before the per-test
    cache below: never the user's ``~/.cache/workbench``, which other test processes and
    the user's own runs share."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WORKBENCH_CACHE", str(tmp_path_factory.mktemp("session-cache")))
        yield


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Keep caches (Hub samples, prepared data, "before" translations) out of the user's
    home, one per test: a test's run prepares and decodes its own data, whatever ran
    before it."""
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(autouse=True)
def _no_run_left_starting():
    """Let go of a run this thread started and a test never ended (it failed before its
    writer's release): the cache entries later tests use are for no run, unlocked."""
    yield
    from workbench.core.cache_use import detach_run

    detach_run()


@pytest.fixture(autouse=True)
def _torch_threads():
    """Put torch's thread count back after each test. Loading a CTranslate2 model sets
    OpenMP's count for the whole process (one thread a core), and a run trained after it
    in the same process would add its floats in another order: bit-identical runs, as a
    kill and resume against a straight run, would differ in the last bits."""
    yield
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != TORCH_THREADS:
        torch.set_num_threads(TORCH_THREADS)
