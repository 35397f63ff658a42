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
