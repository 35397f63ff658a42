"""``workbench sweep`` as a user runs it: a help that imports nothing heavy, bad values and
a database password in one line, and workers as real processes -- one killed with
SIGKILL, one paused past its heartbeat's grace, one stopped by Ctrl-C -- whose trial the
same command run again takes up (in this process).

The workers are real processes because what is checked is theirs (a dead worker's trial
found by its silence, a paused one's writes fenced off, a signal's clean stop); trials run
tests/helpers/fake_training.py's stand-in for run_training (a run folder in milliseconds,
stopped or continued as a real run is), in a worker started with ``python -m
tests.helpers.fake_training``. The sweep's own parts are tested in tests/unit/test_sweep.py.
"""

from __future__ import annotations

import re
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.cli import Started, imports_of
from tests.helpers.hub import closed_port
from tests.helpers.paths import REPO
from tests.helpers.runs import tiny_toml
from tests.helpers.sweep_workers import (
    folder_files,
    one_writer_at_a_time,
    start_worker,
    sweep_args,
    wait_for_checkpoints,
    writers,
)
from tests.helpers.sweeps import study_trials, summary_of

pytest.importorskip("optuna")


def test_sweep_help_imports_neither_optuna_nor_torch():
    """A new interpreter: what the command imports is the point."""
    heavy = ("torch", "optuna", "transformers", "sqlalchemy")
    helped = imports_of("sweep", "--help", modules=heavy, cwd=REPO)
    assert helped.returncode == 0, helped.stderr
    assert helped.imported == []
    assert "--grid" in helped.stdout
    assert "--storage" in helped.stdout


def test_a_bad_grid_on_the_command_line_is_one_line_and_creates_nothing(cli, tmp_path: Path):
    out = tmp_path / "out"
    done = cli("sweep", "--preset", "demo", "--grid", "lr=abc", "--output-dir", str(out))
    assert done.returncode == 2
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1
    assert "--grid 'lr=abc'" in err
    assert not out.exists()


def test_a_database_password_is_never_printed(cli, tmp_path: Path):
    """A server database's URL carries its password; the sweep's lines and its error (no
    driver, or no server, here) show the URL with the password hidden."""
    url = f"postgresql://bob:s3cret@127.0.0.1:{closed_port()}/sweeps"
    args = ["sweep", "--preset", "demo", "--grid", "epochs=2", "--storage", url]
    done = cli(*args, "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "s3cret" not in done.stdout + done.stderr
    assert "postgresql://bob:***@127.0.0.1" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_without_its_driver_a_postgresql_study_names_the_package(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """SQLAlchemy 2 maps postgresql:// to psycopg 3: without it, one line naming what to
    install (psycopg2, which many guides name, would not do)."""
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg -> ImportError
    url = "postgresql://bob:s3cret@127.0.0.1:9/sweeps"
    args = ["sweep", "--preset", "demo", "--grid", "epochs=2", "--storage", url]
    done = cli(*args, "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 2
    err = done.stderr.strip()
    assert err == (
        "workbench: error: the sweep's study at 'postgresql://bob:***@127.0.0.1:9/sweeps' "
        "needs the database driver psycopg, which is not installed: pip install "
        "'nmt-workbench[postgres]' (psycopg 3, SQLAlchemy's driver for postgresql://)"
    )


def test_a_killed_worker_s_trial_is_taken_up_and_continued(cli, tmp_path: Path, fake_training):
    (tmp_path / "tiny.toml").write_text(tiny_toml(num_beams=1), encoding="utf-8")
    output = tmp_path / "out"
    args = sweep_args(output, "--grid", "epochs=6,1", "--heartbeat", "1")
    worker = start_worker(args, tmp_path, fake_seconds=300)  # killed long before
    (killed_run,) = wait_for_checkpoints(output, [worker])
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    _, trials = study_trials(output)
    assert trials[0].state.name == "RUNNING"  # nobody told the study

    rerun = cli(*args, cwd=tmp_path)
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


def test_a_paused_worker_taken_for_dead_writes_nothing_more(cli, tmp_path: Path, fake_training):
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
        other = cli(*args, cwd=tmp_path)  # takes the paused trial for dead, continues it
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


def test_ctrl_c_stops_the_sweep_cleanly_and_a_rerun_continues(cli, tmp_path: Path, fake_training):
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

    rerun = cli(*args, cwd=tmp_path)
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
