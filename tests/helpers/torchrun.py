"""``workbench train`` as one process or as a torchrun job of several, in a folder of its
own, for the tests of distributed and sharded runs (tests/e2e/test_distributed.py,
tests/e2e/test_sharded.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.cli import TINY_DEMO_ARGS

TRAIN = ["-m", "workbench", *TINY_DEMO_ARGS]


def command(work: Path, procs: int, *extra: str) -> list[str]:
    """The command line: ``train`` under torchrun with ``procs`` ranks (each rank's stderr
    kept under ``work/ranks`` by torchrun's ``--tee``, so a failure shows the rank that
    failed first), or alone when ``procs`` is 1."""
    launcher = (
        []
        if procs == 1
        else [
            "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={procs}",
            "--log-dir", str(work / "ranks"), "--tee", "2",
        ]
    )  # fmt: skip
    return [sys.executable, *launcher, *TRAIN, *extra]


def environment(cache: Path) -> dict[str, str]:
    """The runs' environment: offline, one thread a rank, their own WORKBENCH_CACHE (a
    module fixture starts before the per-test cache of tests/conftest.py)."""
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "WORKBENCH_CACHE": str(cache),
    }


def launch(
    work: Path, procs: int, cache: Path, toml: str, *extra: str
) -> subprocess.CompletedProcess:
    """Run ``train`` in ``work`` (made if missing) with ``toml`` as its tiny.toml."""
    work.mkdir(exist_ok=True)
    (work / "tiny.toml").write_text(toml, encoding="utf-8")
    return subprocess.run(
        command(work, procs, *extra),
        cwd=work,
        env=environment(cache),
        capture_output=True,
        text=True,
        timeout=900,
    )


def failure(work: Path, done: subprocess.CompletedProcess) -> str:
    """What to show when a launch failed: each rank's own stderr, then the launcher's tail."""
    ranks = sorted((work / "ranks").rglob("stderr.log"))
    parts = [f"--- {log.relative_to(work)}\n{log.read_text()[-4000:]}" for log in ranks]
    return "\n".join([*parts, "--- launcher", done.stderr[-2000:], done.stdout[-2000:]])


def only_run(work: Path) -> Path:
    """The one run folder under ``work``'s output."""
    (run,) = (work / "translation_output" / "runs").iterdir()
    return run


def step_losses(run: Path) -> dict[int, float]:
    """Each training step's logged loss, by step (a resumed run's steps once each)."""
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return {r["step"]: r["loss"] for r in rows if r["event"] == "TrainStep"}
