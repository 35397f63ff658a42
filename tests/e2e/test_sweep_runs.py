"""``workbench sweep`` with two workers on one SQLite study, each a process of its own (two
processes claiming trials from one database file is the point), training their trials.

The sweep's other tests are in tests/unit/test_sweep.py and tests/cli/test_cli_sweep.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.runs import tiny_toml
from tests.helpers.sweep_workers import (
    start_worker,
    sweep_args,
)
from tests.helpers.sweeps import study_trials, summary_of

optuna = pytest.importorskip("optuna")


def test_two_workers_on_one_sqlite_study_run_distinct_trials(tmp_path: Path):
    (tmp_path / "tiny.toml").write_text(tiny_toml(num_beams=1), encoding="utf-8")
    output = tmp_path / "out"
    args = sweep_args(output, "--grid", "epochs=1,2", "--grid", "lr=3e-3,1e-3")
    workers = [start_worker(args, tmp_path) for _ in range(2)]
    outputs = [w.communicate(timeout=600)[0] for w in workers]
    assert [w.returncode for w in workers] == [0, 0], outputs
    _, trials = study_trials(output)
    assert [t.state.name for t in trials] == ["COMPLETE"] * 4, outputs
    points = [json.dumps(t.params, sort_keys=True) for t in trials]
    assert len(set(points)) == 4  # no grid point twice
    run_dirs = {t.user_attrs["run_dir"] for t in trials}
    assert len(run_dirs) == 4
    assert len(list((output / "runs").iterdir())) == 4
    assert len({t.user_attrs["worker"] for t in trials}) == 2, outputs  # both took trials
    for text in outputs:  # each worker ends with the whole sweep's table
        assert "trials (4);" in text
        assert text.count("\n#") == 4
        assert "best: trial #" in text
    # No trial published (run_training's publish=False): <output>/best_model is the best
    # trial's, copied at the end.
    summaries = {t.number: summary_of(t.user_attrs["run_dir"]) for t in trials}
    for summary in summaries.values():
        assert summary.best_model == summary.run_best_model
    best = max(trials, key=lambda t: t.value)
    published = json.loads((output / "best_model" / "workbench.json").read_text())
    assert published["run_dir"] == summaries[best.number].run_dir
