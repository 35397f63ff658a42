"""A sweep on a real PostgreSQL server, set up as the README says: psycopg 3 (the test
extra), a server of Debian's ``postgresql`` package (.ci/run installs it), a password in
the ``--storage`` URL.

The server is a throwaway cluster (tests/helpers/postgres_server.py). When its programs or the
driver are missing, the test fails under CI (``CI`` set, as .ci/run sets it) and is
skipped, with the reason, elsewhere: CI must run what the README promises, while a
developer without PostgreSQL can still run the rest of the suite.

Trials run the stand-in trainer: what is tested is the study on a server (workers that
start together on a fresh database, claims, a killed worker's trial continued, one writer
per run folder, no password anywhere), not training.
"""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path
from typing import NoReturn

import pytest

from tests.helpers.postgres_server import PostgresServer, server_binaries
from tests.helpers.runs import tiny_toml
from tests.helpers.sweep_workers import (
    one_writer_at_a_time,
    start_worker,
    sweep_args,
    wait_for_checkpoints,
    writers,
)
from workbench.core.run_folder.summary_file import read_summary

#: The server's password: it must not be in any line or file the sweep leaves.
PLANTED = "planted7Secret9pw"


def _missing(what: str, fix: str) -> NoReturn:
    """Fail under CI, skip elsewhere (see the module docstring)."""
    if os.environ.get("CI"):
        pytest.fail(f"{what}, and CI must run this test: {fix}")
    pytest.skip(f"{what}: {fix}")


@pytest.fixture(scope="module")
def postgres(tmp_path_factory: pytest.TempPathFactory):
    """A PostgreSQL server for this module's tests, stopped and removed after them."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("psycopg is not installed", "pip install -e '.[test]'")
    binaries = server_binaries()
    if binaries is None:
        _missing(
            "the PostgreSQL server's programs (initdb, pg_ctl) are not installed",
            "apt-get install postgresql (.ci/run does, as root)",
        )
    server = PostgresServer(binaries, tmp_path_factory.mktemp("postgres"), PLANTED)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def _table_rows(url: str) -> list[str]:
    """Every row of every table of the database, as text: the study's records."""
    import psycopg

    with psycopg.connect(url) as connection:
        tables = [
            name
            for (name,) in connection.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            )
        ]
        assert "trials" in tables
        assert "study_user_attributes" in tables
        return [
            row
            for table in tables
            for (row,) in connection.execute(f'SELECT CAST(t AS text) FROM "{table}" t')
        ]


def test_three_workers_share_a_grid_through_postgresql(
    cli, tmp_path: Path, postgres, fake_training
):
    """Three workers started at the same moment on a fresh database all survive the
    study's creation and take a point each; one is killed with -9 mid-trial, the others
    continue its run folder, and the sweep run again runs nothing: every point finished
    once, each run folder had one writer at a time, and the password is nowhere."""
    import optuna

    (tmp_path / "tiny.toml").write_text(tiny_toml(num_beams=1), encoding="utf-8")
    output = tmp_path / "out"
    url = postgres.url()
    go = tmp_path / "go"  # a new trial "trains" until this file exists
    args = sweep_args(output, "--grid", "epochs=1,2,3", "--heartbeat", "1", "--storage", url)
    workers = [start_worker(args, tmp_path, hold=go) for _ in range(3)]
    try:
        runs = wait_for_checkpoints(output, workers, count=3)  # a point each
        killed = workers[0]
        killed.send_signal(signal.SIGKILL)
        killed_text = killed.communicate(timeout=30)[0]
        go.touch()
        texts = [w.communicate(timeout=300)[0] for w in workers[1:]]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    assert [w.returncode for w in workers[1:]] == [0, 0], texts
    rerun = cli(*args, cwd=tmp_path)  # in this process, as the workers' trials: the stand-in
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr

    (name,) = optuna.get_all_study_names(url)
    trials = optuna.load_study(study_name=name, storage=url).get_trials()
    finished = [t for t in trials if t.state.name == "COMPLETE"]
    assert sorted(t.params["epochs"] for t in finished) == [1.0, 2.0, 3.0]  # each once
    assert sorted(t.user_attrs["run_dir"] for t in finished) == [str(r) for r in runs]
    victim = f"{socket.gethostname()}:{killed.pid}"
    (killed_trial,) = [t for t in trials if t.user_attrs.get("worker") == victim]
    assert killed_trial.state.name == "FAIL"
    assert "outcome" not in killed_trial.user_attrs
    (retry,) = [t for t in finished if t.user_attrs.get("retry_of") == killed_trial.number]
    assert retry.user_attrs["run_dir"] == killed_trial.user_attrs["run_dir"]
    for run in runs:
        summary = read_summary(run)
        assert summary is not None
        assert summary.status == "finished"
        assert one_writer_at_a_time(writers(run)), run
    killed_run = Path(killed_trial.user_attrs["run_dir"])
    assert writers(killed_run)[0] == killed.pid
    assert writers(killed_run)[-1] != killed.pid
    assert "trials (" in rerun.stdout
    assert "continues run" not in rerun.stdout  # none left
    assert len(list((output / "runs").iterdir())) == 3

    # The password: in no printed line, no file of the sweep, no record of the study.
    for text in [killed_text, *texts, rerun.stdout]:  # each starts naming the study
        assert "study postgresql://workbench:***@127.0.0.1:" in text.splitlines()[0]
    printed = [killed_text, *texts, rerun.stdout, rerun.stderr]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "compare.html" for p in files)
    assert len(files) > 30
    for text in printed + [p.read_bytes().decode("utf-8", "replace") for p in files]:
        assert PLANTED not in text
    rows = _table_rows(url)
    assert any(str(runs[0]) in row for row in rows)  # the records are there, and readable
    assert not [row for row in rows if PLANTED in row]
