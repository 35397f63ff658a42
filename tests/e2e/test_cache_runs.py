"""Pruning beside real runs, with real processes, files and locks: a live run's entries are
never pruned, a pruned entry is prepared again by the next run, and a pruner that runs in
a loop while a run prepares its data and trains loses nothing and never sees half an
entry.

The training tests of tests/cli/test_cli_cache.py, whose other tests train nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.caches import numbered_tsv
from tests.helpers.cli import TINY_DEMO_ARGS, command_env, start_cli
from tests.helpers.processes import only_run, start_detached_run, train_steps, wait_until
from tests.helpers.runs import tiny_toml
from workbench.core.caches.listing import list_caches
from workbench.core.config.build import build_config
from workbench.core.data.prepared import prepare_data
from workbench.core.data.prepared_cache import prepared_root
from workbench.core.live.liveness import run_liveness
from workbench.core.live.writer_record import WriterRecord


def prepared_entries(cli, work: Path) -> list[dict]:
    """``workbench cache --json``'s prepared-data entries."""
    done = cli("cache", "--json", "--kind", "prepared", cwd=work)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["entries"]


def test_a_live_runs_data_is_kept_and_once_pruned_is_prepared_again(cli, tmp_path: Path):
    run, record = start_detached_run(tmp_path)
    try:
        wait_until(lambda: len(train_steps(run)) >= 2, "two steps")
        (entry,) = prepared_entries(cli, tmp_path)
        assert entry["runs"] == entry["live_runs"] == [str(run.resolve())]
        done = cli("cache", "prune", "--max-size", "0", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        (kept,) = [
            line
            for line in done.stdout.splitlines()
            if line.startswith(f"kept prepared {entry['name'][:12]} ")
        ]
        assert kept.endswith(f": in use by live run {run.name}")
        assert "removed " not in done.stdout  # all the run's: data, "before", its views
        assert Path(entry["path"]).is_dir()
        stopped = cli("stop", run.name, cwd=tmp_path)
        assert stopped.returncode == 0, stopped.stderr
    finally:
        if run_liveness(run).live:
            os.kill(record.pid, signal.SIGKILL)
    done = cli("cache", "prune", "--max-size", "0", cwd=tmp_path)
    assert f"removed prepared {entry['name'][:12]} " in done.stdout
    assert not Path(entry["path"]).exists()
    again = cli(*TINY_DEMO_ARGS, "--epochs", "1", cwd=tmp_path)  # a new run of the same data
    assert again.returncode == 0, again.stderr[-2000:]
    assert "data: prepared " in again.stdout
    assert "data: cached" not in again.stdout
    (rebuilt,) = prepared_entries(cli, tmp_path)
    assert rebuilt["name"] == entry["name"]  # the same inputs: the same entry, made again
    assert rebuilt["complete"]
    (second,) = [r for r in (tmp_path / "translation_output" / "runs").iterdir() if r != run]
    assert rebuilt["runs"] == [str(second.resolve())]
    assert rebuilt["live_runs"] == []


#: A pruner in a loop: ``cache prune --max-size 0`` (everything it may remove) until the
#: file named by its first argument appears, each pass between two timed lines.
PRUNER = (
    "import pathlib, sys, time\n"
    "from workbench.cli.main import main\n"
    "stop = pathlib.Path(sys.argv[1])\n"
    "while not stop.exists():\n"
    "    print('PASS', time.time(), flush=True)\n"
    "    main(['cache', 'prune', '--max-size', '0'])\n"
    "    print('END', time.time(), flush=True)\n"
    "    time.sleep(0.05)\n"
)


def whole_or_gone(entry: Path) -> bool:
    """Whether a prepared entry holds every file its ``done.json`` lists, at its size (or
    is gone altogether, pruned since it was listed)."""
    try:
        done = json.loads((entry / "done.json").read_text(encoding="utf-8"))
        return all((entry / name).stat().st_size == size for name, size in done["files"].items())
    except FileNotFoundError:
        return not entry.exists()


def test_a_pruner_in_a_loop_beside_a_preparing_run_loses_nothing(tmp_path: Path):
    """Two processes of their own, a run and a pruner, on one cache: what the test checks
    is their meeting."""
    other = numbered_tsv(tmp_path / "other.tsv", 50)
    prepare_data(build_config("demo", overrides={"data": str(other)}))
    (planted,) = [p for p in prepared_root().iterdir() if not p.name.startswith(".")]  # no run's
    (tmp_path / "tiny.toml").write_text(tiny_toml(epochs=3), encoding="utf-8")
    stop = tmp_path / "stop-pruning"
    with (tmp_path / "pruner.log").open("w") as log:
        pruner = subprocess.Popen(
            [sys.executable, "-c", PRUNER, str(stop)],
            cwd=tmp_path, env=command_env(), stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    with (tmp_path / "train.log").open("w") as log:
        training = start_cli(*TINY_DEMO_ARGS, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    seen: set[Path] = set()
    torn: list[str] = []
    lost: list[str] = []
    deadline = time.monotonic() + 600
    try:
        while training.poll() is None:
            assert time.monotonic() < deadline, "the run never ended"
            for entry in list_caches().entries:
                if entry.kind == "prepared" and entry.complete and entry.path != planted:
                    seen.add(entry.path)
                    if not whole_or_gone(entry.path):
                        torn.append(str(entry.path))
            for path in seen:
                if not path.exists() and not _ended(tmp_path):
                    lost.append(str(path))
            time.sleep(0.02)
    finally:
        stop.touch()
        pruner.wait(timeout=120)
        if training.poll() is None:
            training.kill()
    said = (tmp_path / "train.log").read_text(encoding="utf-8")
    assert training.returncode == 0, said[-3000:]
    assert pruner.returncode == 0, (tmp_path / "pruner.log").read_text()[-3000:]
    assert len(seen) == 1  # the run's data, found whole while it ran
    assert torn == []
    assert lost == []
    passes = _passes((tmp_path / "pruner.log").read_text(encoding="utf-8"))
    assert any(f"removed prepared {planted.name[:12]} " in lines for _, _, lines in passes)
    ended = WriterRecord.read(only_run(tmp_path)).heartbeat  # type: ignore[union-attr]
    during = [said for _, finished, said in passes if finished < ended]  # while it lived
    (made,) = seen
    assert any(f"kept prepared {made.name[:12]} " in said for said in during)
    for said in during:  # nothing of the run's went; only the planted entry did
        assert "removed " not in said.replace(f"removed prepared {planted.name[:12]} ", "")


def _ended(work: Path) -> bool:
    """Whether the run in ``work`` has let its folder go (False before it has one)."""
    runs = work / "translation_output" / "runs"
    folders = list(runs.iterdir()) if runs.is_dir() else []
    if not folders or WriterRecord.read(folders[0]) is None:
        return False
    return not run_liveness(folders[0]).writing


def _passes(log: str) -> list[tuple[float, float, str]]:
    """Each pass of the pruner: when it started and ended, and what it said."""
    found = []
    for chunk in log.split("PASS ")[1:]:
        head, _, rest = chunk.partition("\n")
        said, _, end = rest.rpartition("END ")
        if end:
            found.append((float(head), float(end.split()[0]), said))
    return found
