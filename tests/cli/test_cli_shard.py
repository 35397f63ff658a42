"""``workbench train --shard`` and ``export --merge`` refusing what cannot run, in one line,
with no traceback, before any data is read or run folder made: a sharded run in one
process (with or without ``--detach``), the settings a sharded run cannot take, and a
merge of a run that has no shards. The sharded runs themselves are in
tests/e2e/test_sharded.py."""

from __future__ import annotations

import threading

import pytest

from tests.helpers.cli import refused_in_one_line as one_line
from tests.helpers.runs import three_run_folders
from workbench.core.live.writer import RunWriter


def cuda_visible() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--shard",), "this is one process; launch it with torchrun --nproc_per_node=N"),
        (("--shard", "--detach"), "--shard runs under a launcher (torchrun or accelerate"),
        (("--shard-offload",), "--shard-offload offloads a sharded run's state; add --shard"),
        (("--shard", "--average-checkpoints", "3"), "a --shard run's are shards"),
        (
            ("--shard", "--objective", "cpo", "--rank-by", "chrf", "--model", "{model}"),
            "--objective cpo is not sharded yet",
        ),
        (("--gpus", "-1"), "gpus must be a whole number >= 0"),
        pytest.param(
            ("--shard", "--shard-offload"),
            "and this run trains on the CPU, where it is already",
            marks=pytest.mark.skipif(cuda_visible(), reason="a GPU: there it offloads"),
        ),
        (("--gpus", "8"), "--gpus 8 divides a --shard run's plan; add --shard"),
    ],
)
def test_a_sharded_run_that_cannot_run_is_one_line(cli, tiny_model_dir, tmp_path, flags, said):
    flags = tuple(f.replace("{model}", str(tiny_model_dir)) for f in flags)
    result = cli(
        "train", "--headless", "--preset", "demo", "--output-dir", str(tmp_path), *flags
    )  # fmt: skip
    assert said in one_line(result)
    assert not (tmp_path / "runs").exists()


def test_a_launch_in_another_precision_than_the_run_is_one_line(cli, tmp_path, monkeypatch):
    """accelerate launch --mixed_precision bf16 with a run that asks for fp32 would train
    in bf16 while its plan and records said fp32."""
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "bf16")
    result = cli(
        "train", "--headless", "--preset", "demo", "--output-dir", str(tmp_path), "--shard",
        "--fp16",
    )  # fmt: skip
    assert "accelerate launch was given mixed precision bf16 and this run asks for fp16" in (
        one_line(result)
    )


def test_merging_a_live_run_is_one_line(cli, tmp_path):
    output = three_run_folders(tmp_path / "out")
    run = output / "runs" / "20260101-110000-demo"
    writer = RunWriter(threading.Event())
    try:
        writer.hold(run)  # this process now writes the run
        result = cli("export", "--merge", run.name, "--output-dir", str(output))
        assert "is still running, and its checkpoints change while it does" in one_line(result)
    finally:
        writer.release("stopped")


def test_merging_a_run_without_shards_is_one_line(cli, tmp_path):
    output = three_run_folders(tmp_path / "out")
    result = cli("export", "--merge", "20260101-100000-demo", "--output-dir", str(output))
    assert "has no sharded checkpoint to merge" in one_line(result)
    result = cli("export", "--merge", "no-such-run", "--output-dir", str(output))
    assert "no run 'no-such-run'" in one_line(result)
