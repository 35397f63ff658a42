"""A checkpoint goes on only under as many processes as wrote it: the Trainer's RNG states,
one per process, say how many that was."""

from __future__ import annotations

import pytest

from workbench.core.train.checkpoints import check_world_size, checkpoint_world_size
from workbench.errors import WorkbenchError


def test_the_rng_states_say_how_many_processes_wrote_a_checkpoint(tmp_path):
    alone, two = tmp_path / "checkpoint-5", tmp_path / "checkpoint-6"
    alone.mkdir()
    two.mkdir()
    (alone / "rng_state.pth").write_bytes(b"")
    for rank in (0, 1):
        (two / f"rng_state_{rank}.pth").write_bytes(b"")
    assert checkpoint_world_size(alone) == 1
    assert checkpoint_world_size(two) == 2
    check_world_size(alone, 1)
    check_world_size(two, 2)
    with pytest.raises(WorkbenchError) as refused:
        check_world_size(two, 3)
    assert str(refused.value).startswith(
        "checkpoint-6 was written by 2 processes and this job has 3"
    )
    assert "launch it with --nproc_per_node=2" in str(refused.value)
    with pytest.raises(WorkbenchError) as refused:
        check_world_size(alone, 2)
    assert "run it as one process" in str(refused.value)


def test_a_rank_that_lost_its_rng_state_is_still_counted_by_its_shards(tmp_path):
    checkpoint = tmp_path / "checkpoint-4"
    (checkpoint / "pytorch_model_fsdp_0").mkdir(parents=True)
    (checkpoint / "rng_state_0.pth").write_bytes(b"")
    for rank in (0, 1):
        (checkpoint / "pytorch_model_fsdp_0" / f"__{rank}_0.distcp").write_bytes(b"")
    assert checkpoint_world_size(checkpoint) == 2


def test_a_cut_short_metadata_file_is_a_missing_one(tmp_path):
    """A truncated pickle is not a traceback: the checkpoint is said to lack the file."""
    from workbench.core.train.sharded_checkpoint import check_shards, missing_shards

    checkpoint = tmp_path / "checkpoint-4"
    for part in ("pytorch_model_fsdp_0", "optimizer_0"):
        (checkpoint / part).mkdir(parents=True)
        (checkpoint / part / ".metadata").write_bytes(b"\x80\x04\x95\x10\x00")  # cut short
    assert missing_shards(checkpoint) == [
        "pytorch_model_fsdp_0/.metadata",
        "optimizer_0/.metadata",
    ]
    with pytest.raises(WorkbenchError, match="is a sharded checkpoint with files missing"):
        check_shards(checkpoint)
