"""The sweep (workbench.core.experiments.sweep): specs, the objective, the study, and
sweeps in this process. Its trials run tests/helpers/fake_training.py's stand-in for
run_training (a run folder in milliseconds, stopped or continued as a real run is).
``workbench sweep`` with its workers as real processes (killed, paused, stopped by Ctrl-C)
is in tests/cli/test_cli_sweep.py, and the two-worker sweep that trains in
tests/e2e/test_sweep_runs.py.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from tests.helpers.data import scores_block
from tests.helpers.runs import small
from tests.helpers.sweeps import summary_of
from workbench.core.config.build import build_config
from workbench.core.experiments.sweep import (
    OPTUNA_MISSING,
    TrialFailed,
    TrialRow,
    import_optuna,
    make_plan,
    run_sweep,
    runs_to_compare,
    trial_value,
    validation_bleu,
)
from workbench.core.experiments.sweep.space import default_name, parse_space, point_text
from workbench.core.records.scores import SetScores
from workbench.core.records.summary import RunSummary
from workbench.errors import WorkbenchError

optuna = pytest.importorskip("optuna")


def value_of(row: TrialRow) -> float:
    """A settled trial's value; a failed assertion where it has none."""
    assert row.value is not None, f"trial #{row.number} has no value"
    return row.value


def run_dir_of(row: TrialRow) -> str:
    """A trial's run folder; a failed assertion where it has none."""
    assert row.run_dir is not None, f"trial #{row.number} has no run folder"
    return row.run_dir


# --------------------------------------------------------------------------- specs


def test_a_grid_is_every_combination_of_checked_values():
    base = build_config("demo")
    space = parse_space(base, ["lr=5e-4,1e-3", "epochs=10,20,10"], [])
    assert space.mode == "grid"
    assert [d.name for d in space.dimensions] == ["learning_rate", "epochs"]
    points = space.grid_points()
    assert points == [
        {"learning_rate": 5e-4, "epochs": 10.0},
        {"learning_rate": 5e-4, "epochs": 20.0},
        {"learning_rate": 1e-3, "epochs": 10.0},
        {"learning_rate": 1e-3, "epochs": 20.0},
    ]  # the repeated 10 once
    assert point_text(points[0]) == "lr=0.0005 epochs=10"
    assert space.spec() == "grid learning_rate=0.0005,0.001 epochs=10,20"


def test_a_search_reads_ranges_and_choices():
    base = build_config("demo")
    space = parse_space(
        base,
        [],
        [
            "lr=loguniform:1e-5:1e-3",
            "batch-size=choice:16,32",
            "epochs=int:2:6",
            "label_smoothing=uniform:0:0.2",
        ],
    )
    assert [(d.name, d.kind, d.values) for d in space.dimensions] == [
        ("learning_rate", "loguniform", (1e-5, 1e-3)),
        ("batch_size", "choice", (16, 32)),
        ("epochs", "int", (2, 6)),
        ("label_smoothing", "uniform", (0.0, 0.2)),
    ]


@pytest.mark.parametrize(
    ("grid", "search", "needles"),
    [
        (["lr=abc"], [], ["--grid 'lr=abc'", "learning_rate", "'abc'"]),
        (["lr=-1"], [], ["--grid 'lr=-1'", "learning rate must be in (0, 1]"]),
        (["speed=1,2"], [], ["unknown setting 'speed'", "lr, epochs"]),
        (["lr"], [], ["--grid takes NAME=VALUES", "--grid lr=5e-4,1e-3"]),
        (["output_dir=a,b"], [], ["output_dir cannot be swept", "--output-dir"]),
        (["lr=1e-3", "learning_rate=2e-3"], [], ["learning_rate is swept twice"]),
        (["lr=1e-3"], ["epochs=int:2:4"], ["--grid or --search, not both"]),
        ([], [], ["--grid epochs=2,4", "--search lr=loguniform"]),
        ([], ["lr=normal:0:1"], ["unknown kind 'normal'", "loguniform:LOW:HIGH"]),
        ([], ["lr=loguniform:1e-3:1e-5"], ["LOW must be below HIGH", "0.001:1e-05"]),
        ([], ["lr=loguniform:1e-3"], ["loguniform takes LOW:HIGH"]),
        ([], ["batch_size=uniform:8:64"], ["whole number", "batch_size=int:LOW:HIGH"]),
        ([], ["bf16=uniform:0:1"], ["not a number", "choice:A,B"]),
        ([], ["epochs=choice:3"], ["choice needs two values"]),
    ],
)
def test_a_bad_spec_is_one_sentence_with_the_value_and_the_fix(grid, search, needles):
    with pytest.raises(WorkbenchError) as err:
        parse_space(build_config("demo"), grid, search)
    message = str(err.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message


def test_plan_counts_and_names():
    base = build_config("demo", overrides={"output_dir": "/tmp/somewhere"})
    grid = parse_space(base, ["epochs=2,4"], [])
    with pytest.raises(WorkbenchError, match="--trials is for --search"):
        make_plan(base, grid, "g", trials=3)
    with pytest.raises(WorkbenchError, match="letters, digits"):
        make_plan(base, grid, "a/b")
    plan = make_plan(base, grid, default_name(base, grid))
    assert plan.trials == 2
    assert plan.storage_url == f"sqlite:///{Path('/tmp/somewhere/sweeps').resolve()}/{plan.name}.db"
    search = parse_space(base, [], ["lr=loguniform:1e-5:1e-3"])
    assert make_plan(base, search, "s").trials == 8
    with pytest.raises(WorkbenchError, match="--trials must be 1 or more"):
        make_plan(base, search, "s", trials=0)


def test_the_default_name_is_the_same_for_the_same_command_only():
    base = build_config("demo")
    grid = parse_space(base, ["epochs=2,4"], [])
    name = default_name(base, grid)
    assert name.startswith("demo-epochs-")
    assert name == default_name(build_config("demo"), grid)
    elsewhere = build_config("demo", overrides={"output_dir": "/tmp/elsewhere"})
    assert default_name(elsewhere, grid) == name  # the folder is not part of the recipe
    assert default_name(base, parse_space(base, ["epochs=2,5"], [])) != name
    other_base = build_config("demo", overrides={"learning_rate": 1e-3})
    assert default_name(other_base, parse_space(other_base, ["epochs=2,4"], [])) != name


# --------------------------------------------------------------------------- the objective


def _summary(**blocks) -> RunSummary:
    return RunSummary.from_dict({"status": "finished", **blocks})


def test_the_objective_is_validation_bleu_and_never_reads_the_test_set():
    validation = scores_block("validation", (0.5, 7.25), (2.0, 12.0))
    with_test = _summary(validation=validation, test=scores_block("test", (0.1, 99.0), (1.0, 99.0)))
    without_test = _summary(validation=validation)
    garbage_test = _summary(validation=validation, test="not a score block")
    assert trial_value(with_test) == trial_value(without_test) == trial_value(garbage_test)
    assert trial_value(with_test) == 7.25
    # The function that decides takes the validation block alone: no summary, no test.
    assert validation_bleu(SetScores.from_dict(validation)) == 7.25


@pytest.mark.parametrize("validation", [None, "garbage", {"bleu_after": 3.0}])
def test_a_run_without_validation_scores_fails_its_trial_with_the_reason(validation):
    summary = _summary(validation=validation, test=scores_block("test", (0.1, 9.0), (1, 9)))
    with pytest.raises(TrialFailed, match="no validation BLEU"):
        trial_value(summary)


# --------------------------------------------------------------------------- optuna


def test_without_optuna_the_sweep_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna -> ImportError
    with pytest.raises(WorkbenchError) as err:
        import_optuna()
    assert (
        str(err.value)
        == OPTUNA_MISSING
        == ("workbench sweep needs Optuna: pip install 'nmt-workbench[sweep]'")
    )


# --------------------------------------------------------------------------- the study


def test_a_point_enqueued_twice_is_run_once(tmp_path: Path):
    """Two workers on a server database can enqueue a point at the same moment; the
    higher-numbered copy is marked a duplicate when claimed, never trained."""
    from workbench.core.experiments.sweep import SweepWorker

    base = build_config("demo", overrides={"output_dir": str(tmp_path / "out")})
    space = parse_space(base, ["epochs=2"], [])
    worker = SweepWorker(make_plan(base, space, "dup"), lambda e: None, threading.Event())
    params = space.grid_points()[0]
    for _ in range(2):
        worker.study.enqueue_trial(params, user_attrs={"point": json.dumps(params)})
    first = worker.claims.claim()
    assert not isinstance(first, str)
    assert first.trial.number == 0
    # The first is running (here, in this worker): the copy is a duplicate, nothing is left.
    assert worker.claims.claim() == "wait"
    first.lease.stop()
    states = [
        (t.number, t.state.name, t.user_attrs.get("outcome")) for t in worker.study.get_trials()
    ]
    assert states == [(0, "RUNNING", None), (1, "FAIL", "duplicate")]


# --------------------------------------------------------------------------- sweeps


def test_a_grid_sweep_runs_each_point_once_and_a_rerun_runs_none(tmp_path: Path, fake_training):
    base = small(tmp_path, epochs=1.0)
    space = parse_space(base, ["epochs=1,2"], [])
    plan = make_plan(base, space, default_name(base, space))
    events: list = []
    result = run_sweep(plan, events.append)
    assert result.status == "finished"
    assert len(result.trials) == 2
    runs = sorted((tmp_path / "out" / "runs").iterdir())
    assert len(runs) == 2
    for row in result.trials:
        summary = summary_of(row.run_dir)
        assert row.status == "finished"
        assert summary is not None
        assert summary.status == "finished"
        # The study's value is the run's validation BLEU after fine-tuning, nothing else.
        assert summary.validation is not None
        assert row.value == summary.validation.bleu_after
        # No trial publishes: <output>/best_model is the best trial's, copied at the end.
        assert summary.best_model == summary.run_best_model
    assert {point_text(r.params) for r in result.trials} == {"epochs=1", "epochs=2"}
    assert result.best is not None
    assert result.best.value == max(value_of(r) for r in result.trials)
    best_summary = summary_of(result.best.run_dir)
    published = json.loads((tmp_path / "out" / "best_model" / "workbench.json").read_text())
    assert published["run_dir"] == best_summary.run_dir  # the best trial's model, published
    assert [type(e).__name__ for e in events].count("TrialStarted") == 2
    # The closing compare: the best run first (it is run A, the baseline of each test).
    compared, left_out = runs_to_compare(result)
    values = {run_dir_of(r): value_of(r) for r in result.trials}
    assert left_out == 0
    assert sorted(compared) == sorted(values)
    assert values[compared[0]] == max(values.values())

    again = run_sweep(plan, events.append)
    assert again.status == "finished"
    assert [r.number for r in again.trials] == [0, 1]
    assert sorted((tmp_path / "out" / "runs").iterdir()) == runs


def test_a_lease_is_lost_when_another_worker_fails_its_trial(tmp_path: Path):
    """The heartbeat's second signal: its trial failed as stale by another worker (as
    ``fail_stale_trials`` does), the lease is lost at the next beat, for good."""
    from workbench.core.experiments.sweep.lease import TrialLease

    storage = optuna.storages.RDBStorage(f"sqlite:///{tmp_path / 'study.db'}")
    study = optuna.create_study(storage=storage)
    trial = study.ask()
    lease = TrialLease(storage, trial._trial_id, interval=1, grace=60)  # no expiry here
    try:
        assert lease.held()
        storage.set_trial_state_values(trial._trial_id, optuna.trial.TrialState.FAIL)
        lease.thread.join(timeout=60)  # its next beat sees the trial failed and ends
        assert not lease.held()
        assert "another worker took the trial for dead" in str(lease.lost)
    finally:
        lease.stop()


def test_a_search_draws_its_trials_in_range_and_a_rerun_draws_no_more(
    tmp_path: Path, fake_training
):
    base = small(tmp_path, epochs=1.0)
    space = parse_space(base, [], ["lr=loguniform:1e-3:5e-3", "bs=choice:16,32"])
    plan = make_plan(base, space, "search", trials=2)
    result = run_sweep(plan)
    assert result.status == "finished"
    assert [r.status for r in result.trials] == ["finished", "finished"]
    for row in result.trials:
        assert 1e-3 <= row.params["learning_rate"] <= 5e-3
        assert row.params["batch_size"] in (16, 32)
        config = json.loads((Path(run_dir_of(row)) / "config.json").read_text())
        assert config["learning_rate"] == row.params["learning_rate"]  # the run used the draw
    assert len({r.params["learning_rate"] for r in result.trials}) == 2
    assert [r.number for r in run_sweep(plan).trials] == [0, 1]
