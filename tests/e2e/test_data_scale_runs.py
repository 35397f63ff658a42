"""Data at scale: pairs read into Arrow, cleaned and tokenized in worker processes, split by row
numbers, cached across runs; and TSV lines whose quotes are text.

The tests that train (or build), split from tests/unit/test_data_scale.py, whose other tests do
not.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from workbench.core.config.build import build_config
from workbench.core.data.prepared import prepare_data


def test_a_run_killed_while_its_workers_prepare_leaves_nothing_the_next_run_trips_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """kill -9 of a run (and its forked workers) mid-preparation: no cache entry appears,
    the next preparation removes the dead one's folder and prepares the same data."""
    import signal
    import subprocess
    import sys
    import time

    sys.path.insert(0, str(REPO / "benchmarks"))
    from data_scale import make_corpus

    corpus = make_corpus(60_000, tmp_path / "pairs.tsv")  # past PARALLEL_MIN: workers
    cache = tmp_path / "cache"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "WORKBENCH_CACHE": str(cache)}
    child = subprocess.Popen(
        [sys.executable, "-m", "workbench", "train", "--headless", "--preset", "demo",
         "--data", str(corpus), "--num-proc", "2", "--output-dir", str(tmp_path / "out")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    root = cache / "prepared"
    deadline = time.monotonic() + 120
    while not list(root.glob(".building-*/features-*.arrow")):
        assert child.poll() is None, "no worker wrote a shard"
        assert time.monotonic() < deadline, "no worker wrote a shard"
        time.sleep(0.05)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    time.sleep(0.5)  # the workers die with their group
    (dead,) = list(root.glob(".building-*"))
    assert not [p for p in root.iterdir() if not p.name.startswith(".")]  # no entry
    monkeypatch.setenv("WORKBENCH_CACHE", str(cache))
    config = build_config("demo", overrides={"data": str(corpus), "num_proc": 2})
    data = prepare_data(config)
    assert not dead.exists()
    assert data.cleaning.pairs_in == 60_000
    assert len(data.train) > 40_000
    assert [p.name for p in root.iterdir()] != []
    assert not list(root.glob(".building-*"))
