"""Checkpoint averaging (``--average-checkpoints``): the mean of the weights, the
checkpoints kept for it, and the choice made on validation only.

The runs here are copies of the shared finished run (two epoch checkpoints), averaged
for real: real checkpoints, real decoding, sacreBLEU's paired test.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from workbench.core.train.averaging import (
    average_weights,
    keep_for_averaging,
)

# --------------------------------------------------------------------------- the mean


def _save(folder: Path, tensors: dict) -> Path:
    from safetensors.torch import save_file

    folder.mkdir(parents=True)
    save_file(tensors, str(folder / "model.safetensors"), {"format": "pt"})
    return folder


def test_floats_are_averaged_and_the_rest_taken_from_the_first(tmp_path: Path):
    import torch

    generator = torch.Generator().manual_seed(0)
    table = torch.randn(7, 3, generator=generator)  # the same in every checkpoint
    folders, weights = [], []
    for i in range(3):
        weight = torch.randn(4, 5, generator=generator)
        weights.append(weight)
        folders.append(
            _save(
                tmp_path / f"checkpoint-{i}",
                {
                    "weight": weight,
                    "half": weight.to(torch.bfloat16),
                    "table": table,
                    "ids": torch.arange(5) + i,
                },
            )
        )
    averaged = average_weights(folders)
    assert torch.allclose(averaged["weight"], torch.stack(weights).mean(0), atol=1e-7)
    assert averaged["weight"].dtype == torch.float32
    assert averaged["half"].dtype == torch.bfloat16
    assert torch.equal(averaged["table"], table)  # bit for bit: summed in float64
    assert torch.equal(averaged["ids"], torch.arange(5))  # not averaged: the first's

    other = _save(tmp_path / "other", {"weight": weights[0]})
    with pytest.raises(ValueError, match="other holds other tensors than checkpoint-0"):
        average_weights([folders[0], other])


# --------------------------------------------------------------------------- what is kept


def _checkpoint(folder: Path, step: int) -> Path:
    path = folder / f"checkpoint-{step}"
    path.mkdir(parents=True)
    for name in ("model.safetensors", "trainer_state.json", "optimizer.pt"):
        (path / name).write_bytes(b"{}")
    return path


@pytest.mark.parametrize(
    ("which", "kept"),
    [
        # the 2 best: 20 (9.0), then 30 of the equal 30 and 40 (the earlier, as the Trainer)
        ("best", [20, 30, 45]),
        # the 2 last epochs, the best, and 45 (just saved, mid-epoch: to resume from)
        ("last", [20, 30, 40, 45]),
    ],
)
def test_the_checkpoints_averaging_needs_are_kept(tmp_path: Path, which: str, kept: list[int]):
    for step in (10, 20, 30, 40, 45):
        _checkpoint(tmp_path, step)
    (tmp_path / "checkpoint-50").mkdir()  # half-written by a kill before a resume
    state = SimpleNamespace(
        global_step=45,
        best_model_checkpoint=str(tmp_path / "checkpoint-20"),
        log_history=[
            {"loss": 3.0, "step": 5},
            *(
                {"eval_bleu": bleu, "epoch": float(epoch), "step": step}
                for epoch, (step, bleu) in enumerate([(10, 5.0), (20, 9.0), (30, 7.0), (40, 7.0)])
            ),
        ],
    )
    keep_for_averaging(tmp_path, state, 2, which)
    assert sorted(int(p.name.split("-")[1]) for p in tmp_path.iterdir()) == kept


# --------------------------------------------------------------------------- the choice
