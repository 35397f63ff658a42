"""``workbench sweep``: specs, the objective, and sweeps -- one worker, two workers on one
SQLite study, a worker killed with SIGKILL, a worker stopped by Ctrl-C.

The subprocess tests use real processes and signals: what they check (two processes
claiming trials from one database file, a dead worker's trial found by its silence) is
exactly what a mock would hide. What the protocol does not need is real training: except
the two-worker sweep, which trains its four tiny runs, trials run tests/helpers/fake_training.py's
stand-in for run_training (a run folder in milliseconds, stopped or continued as a real
run is), in this process or in a worker started with ``python -m tests.helpers.fake_training``.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.cli import Started
from tests.helpers.data import scores_block
from tests.helpers.fake_training import fake_run_training
from tests.helpers.hub import closed_port
from tests.helpers.paths import REPO
from tests.helpers.runs import small, tiny_toml
from tests.helpers.sweep_workers import (
    fake_rerun,
    folder_files,
    one_writer_at_a_time,
    start_worker,
    sweep_args,
    wait_for_checkpoints,
    writers,
)
from tests.helpers.sweeps import study_trials, summary_of
from workbench.cli import main
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


# --------------------------------------------------------------------------- the command


def test_without_optuna_the_sweep_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna -> ImportError
    with pytest.raises(WorkbenchError) as err:
        import_optuna()
    assert (
        str(err.value)
        == OPTUNA_MISSING
        == ("workbench sweep needs Optuna: pip install 'nmt-workbench[sweep]'")
    )


def test_sweep_help_imports_neither_optuna_nor_torch():
    code = (
        "import sys\nfrom workbench.cli import main\n"
        "try:\n    main(['sweep', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('HEAVY', [m for m in ('torch', 'optuna', 'transformers', 'sqlalchemy') "
        "if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert "HEAVY []" in out.stdout
    assert "--grid" in out.stdout
    assert "--storage" in out.stdout


def test_a_bad_grid_on_the_command_line_is_one_line_and_creates_nothing(tmp_path: Path, capsys):
    out = tmp_path / "out"
    assert main(["sweep", "--preset", "demo", "--grid", "lr=abc", "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--grid 'lr=abc'" in err
    assert not out.exists()


def test_a_database_password_is_never_printed(tmp_path: Path, capsys):
    """A server database's URL carries its password; the sweep's lines and its error (no
    driver, or no server, here) show the URL with the password hidden."""
    url = f"postgresql://bob:s3cret@127.0.0.1:{closed_port()}/sweeps"
    code = main(
        [
            "sweep",
            "--preset",
            "demo",
            "--grid",
            "epochs=2",
            "--storage",
            url,
            "--output-dir",
            str(tmp_path / "out"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 2
    assert "s3cret" not in captured.out + captured.err
    assert "postgresql://bob:***@127.0.0.1" in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_without_its_driver_a_postgresql_study_names_the_package(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
):
    """SQLAlchemy 2 maps postgresql:// to psycopg 3: without it, one line naming what to
    install (psycopg2, which many guides name, would not do)."""
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg -> ImportError
    url = "postgresql://bob:s3cret@127.0.0.1:9/sweeps"
    args = ["sweep", "--preset", "demo", "--grid", "epochs=2", "--storage", url]
    assert main([*args, "--output-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "workbench: error: the sweep's study at 'postgresql://bob:***@127.0.0.1:9/sweeps' "
        "needs the database driver psycopg, which is not installed: pip install "
        "'nmt-workbench[postgres]' (psycopg 3, SQLAlchemy's driver for postgresql://)"
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


@pytest.fixture
def fake_training(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trials in this process run the stand-in (the sweep imports run_training from its
    module when a trial starts, so patching the module's attribute reaches it)."""
    from workbench.core.train import run_training as training_module

    monkeypatch.setattr(training_module, "run_training", fake_run_training)


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


def test_a_killed_worker_s_trial_is_taken_up_and_continued(tmp_path: Path):
    (tmp_path / "tiny.toml").write_text(tiny_toml(num_beams=1), encoding="utf-8")
    output = tmp_path / "out"
    args = sweep_args(output, "--grid", "epochs=6,1", "--heartbeat", "1")
    worker = start_worker(args, tmp_path, fake_seconds=300)  # killed long before
    (killed_run,) = wait_for_checkpoints(output, [worker])
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    _, trials = study_trials(output)
    assert trials[0].state.name == "RUNNING"  # nobody told the study

    rerun = fake_rerun(args, tmp_path)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    _, trials = study_trials(output)
    status = {t.number: (t.state.name, t.user_attrs.get("outcome")) for t in trials}
    assert status[0] == ("FAIL", None)  # failed by the heartbeat check: its worker died
    done = [t for t in trials if t.state.name == "COMPLETE"]
    assert sorted(t.params["epochs"] for t in done) == [1.0, 6.0]
    retry = next(t for t in done if t.params["epochs"] == 6.0)
    assert retry.user_attrs["retry_of"] == 0
    assert retry.user_attrs["run_dir"] == retry.user_attrs["resume"] == str(killed_run)
    assert summary_of(killed_run).status == "finished"  # continued, not started over
    assert len(list((output / "runs").iterdir())) == 2
    assert f"continues run {killed_run.name}" in rerun.stdout
    assert f"#0  killed  epochs=6  → run {killed_run.name}, continued by trial #" in rerun.stdout
    assert "best: trial #" in rerun.stdout


def _pause_outside_the_study(worker: Started, database: Path) -> None:
    """SIGSTOP ``worker`` at a moment it holds no lock on the SQLite study.

    Its heartbeat writes to the database for a few milliseconds a second; paused inside
    one, it would hold every other worker up (SQLite's lock is the file's), which is not
    what is tested here. So it is paused, the database's lock tried, and when that fails it
    is let go on a moment and paused again.
    """
    import sqlite3

    while True:
        worker.send_signal(signal.SIGSTOP)
        while Path(f"/proc/{worker.pid}/stat").read_text().split(") ")[1][0] != "T":
            time.sleep(0.01)  # until the signal has stopped it
        connection = sqlite3.connect(database, timeout=0.5, isolation_level=None)
        try:
            connection.execute("BEGIN EXCLUSIVE")
            connection.execute("ROLLBACK")
            return
        except sqlite3.OperationalError:  # "database is locked": paused inside a write
            worker.send_signal(signal.SIGCONT)
            time.sleep(0.05)
        finally:
            connection.close()


def test_a_paused_worker_taken_for_dead_writes_nothing_more(tmp_path: Path):
    """A live worker whose heartbeat is late (here: paused with SIGSTOP past the grace
    period) has its trial continued by another worker; resumed, it finds its lease lost,
    stops at its next step, writes nothing more into the run folder and says so once."""
    (tmp_path / "tiny.toml").write_text(tiny_toml(num_beams=1), encoding="utf-8")
    output = tmp_path / "out"
    args = sweep_args(output, "--grid", "epochs=6,1", "--heartbeat", "1")
    # Unfenced, it would go on writing a line every step, and its summary after a minute.
    paused = start_worker(args, tmp_path, fake_seconds=60)
    (run,) = wait_for_checkpoints(output, [paused])
    (database,) = (output / "sweeps").glob("*.db")
    _pause_outside_the_study(paused, database)
    try:
        other = fake_rerun(args, tmp_path)  # takes the paused trial for dead, continues it
        left_by_other = folder_files(run)
    finally:
        paused.send_signal(signal.SIGCONT)
    text = paused.communicate(timeout=120)[0]
    assert other.returncode == 0, other.stdout + other.stderr
    assert paused.returncode == 0, text
    assert f"continues run {run.name}" in other.stdout
    assert summary_of(run).status == "finished"

    # The paused worker wrote nothing once resumed: no step line, checkpoint or summary.
    assert folder_files(run) == left_by_other
    pids = writers(run)
    assert pids[0] == paused.pid
    assert pids[-1] != paused.pid
    assert one_writer_at_a_time(pids), pids
    lost = [line for line in text.splitlines() if " lost: " in line]
    assert len(lost) == 1, text
    assert lost[0].startswith("warning: trial #0 ")
    assert f"→ run {run.name}  lost: " in lost[0]
    assert "this worker stopped at step " in lost[0]
    assert "wrote nothing more" in lost[0]
    assert "Traceback" not in text

    _, trials = study_trials(output)
    assert trials[0].state.name == "FAIL"  # failed as stale by the other worker
    done = [t for t in trials if t.state.name == "COMPLETE"]
    assert sorted(t.params["epochs"] for t in done) == [1.0, 6.0]
    retry = next(t for t in done if t.params["epochs"] == 6.0)
    assert retry.user_attrs["retry_of"] == 0
    assert retry.user_attrs["run_dir"] == str(run)


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


def test_ctrl_c_stops_the_sweep_cleanly_and_a_rerun_continues(tmp_path: Path):
    (tmp_path / "tiny.toml").write_text(tiny_toml(num_beams=1), encoding="utf-8")
    output = tmp_path / "out"
    args = sweep_args(output, "--grid", "epochs=6,1")
    worker = start_worker(args, tmp_path, fake_seconds=300)  # stopped long before
    (stopped_run,) = wait_for_checkpoints(output, [worker])
    worker.send_signal(signal.SIGINT)
    text = worker.communicate(timeout=120)[0]
    assert worker.returncode == 130, text
    assert "stopping after this step (SIGINT)" in text
    assert "Traceback" not in text
    assert "run the same command again to continue" in text
    _, trials = study_trials(output)
    assert [(t.state.name, t.user_attrs.get("outcome")) for t in trials] == [
        ("FAIL", "stopped"),
        ("WAITING", None),
    ]  # the grid's other point, not started
    assert summary_of(stopped_run).status == "stopped"

    rerun = fake_rerun(args, tmp_path)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"continues run {stopped_run.name}" in rerun.stdout
    _, trials = study_trials(output)
    assert [t.state.name for t in trials] == ["FAIL", "COMPLETE", "COMPLETE"]
    assert summary_of(stopped_run).status == "finished"
    assert len(list((output / "runs").iterdir())) == 2
    assert "trials (3);" in rerun.stdout
    assert f"#0  stopped  epochs=6  → run {stopped_run.name}, continued by trial #2" in rerun.stdout
    # It ends with the compare of the best run (A) against the other, written beside the runs.
    assert "Comparing 2 runs; A is the baseline of every test." in rerun.stdout
    assert re.search(r"\n  B +\d+\.\d\d \(", rerun.stdout)  # B's paired-test row
    assert len(list((output / "comparisons").glob("*/compare.html"))) == 1


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
