"""Checkpoint averaging (``--average-checkpoints``): the mean of the weights, the
checkpoints kept for it, and the choice made on validation only.

The runs here are copies of the shared finished run (two epoch checkpoints), averaged
for real: real checkpoints, real decoding, sacreBLEU's paired test.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.helpers.runs import FinishedRun
from workbench.core.events import Note
from workbench.core.train.averaging import (
    AVERAGED_MODEL,
    Averaging,
    average_checkpoints,
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


def _held_out(finished_run: FinishedRun, config):
    """The run's validation set, decoded and scored as the run did (HeldOutSets.of)."""
    from workbench.core.decoding import DecodeOptions
    from workbench.core.evaluate.before_after import HeldOutSets

    validation = finished_run.result.summary.validation
    assert validation is not None
    return HeldOutSets(
        pairs={"validation": finished_run.handed["validation"]},
        names={"validation": validation.name},
        options=DecodeOptions(config.num_beams, config.max_new_tokens, config.no_repeat_ngram_size),
        batch_size=config.eval_batch_size,
        bleu_tokenize=config.bleu_tokenize,
    )


def _run_copy(finished_run: FinishedRun, tmp_path: Path, k: int):
    """A copy of the finished run, its config asking for ``k`` checkpoints averaged, and
    the Trainer's state as its last checkpoint holds it."""
    from transformers import TrainerState

    from workbench.core.run_folder import saved_config

    run = finished_run.copy_to(tmp_path / "out")
    config = dataclasses.replace(saved_config(run, "demo"), average_checkpoints=k)
    state = TrainerState.load_from_json(str(run / "checkpoints/checkpoint-18/trainer_state.json"))
    return run, config, state


def _after_translations(run: Path) -> list[str]:
    lines = (run / "validation_translations.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["after"] for line in lines]


@pytest.mark.slow
def test_the_average_of_a_run_is_scored_on_validation_against_its_best(
    finished_run: FinishedRun, tmp_path: Path
):
    """Three asked for, two epochs there: both averaged, with a line saying so."""
    import torch
    from safetensors.torch import load_file

    run, config, state = _run_copy(finished_run, tmp_path, k=3)
    notes: list = []
    result = average_checkpoints(
        state, config, _held_out(finished_run, config), run / "best_model", "cpu", notes.append
    )
    record = result.record
    assert record is not None
    assert record.k == 3
    assert record.which == "best"
    assert record.checkpoints == ["checkpoint-9", "checkpoint-18"]
    assert record.epochs == [1.0, 2.0]
    assert record.validation is not None
    best, averaged = record.validation.best, record.validation.averaged
    # "best" is decoded exactly as the run decoded its "after".
    assert finished_run.result.summary.validation is not None
    assert best.bleu == finished_run.result.summary.validation.bleu_after
    assert record.kept == ("averaged" if averaged.bleu > best.bleu else "best")
    assert record.p_value is not None
    assert 0 < record.p_value <= 1
    texts = [n.text for n in notes if isinstance(n, Note)]
    assert "--average-checkpoints 3: the run has only 2 epoch checkpoints; averaging those 2" in (
        texts
    )
    decision = (
        "the average is kept"
        if record.kept == "averaged"
        else f"the best checkpoint is kept (the average stays in {run / AVERAGED_MODEL})"
    )
    assert (
        f"averaging the 2 best checkpoints (epochs 1, 2): validation BLEU {best.bleu:.2f} → "
        f"{averaged.bleu:.2f} ({averaged.bleu - best.bleu:+.2f}, p = "
    ) in texts[-1]
    assert texts[-1].endswith(f"against the best checkpoint (epoch 1); {decision}")

    assert record.model is not None
    model = Path(record.model)
    checkpoints = [load_file(str(run / "checkpoints" / c / "model.safetensors")) for c in
                   record.checkpoints]  # fmt: skip
    weights = load_file(str(model / "model.safetensors"))
    assert weights.keys() == checkpoints[0].keys()
    for name, value in weights.items():
        mean = torch.stack([c[name] for c in checkpoints]).mean(0)
        assert torch.allclose(value, mean, atol=1e-6), name
    # the averaged folder loads as a model, with the run's settings
    assert (model / "workbench.json").is_file()
    assert (model / "config.json").is_file()


@pytest.mark.slow
def test_an_average_better_on_validation_becomes_the_best_model(
    finished_run: FinishedRun, tmp_path: Path
):
    """Checkpoints made so that their mean is the run's trained model, and the "best"
    checkpoint its untrained one: the average scores the run's "after" on validation, the
    best checkpoint its "before"; the average wins and replaces best_model/."""
    import torch
    from safetensors.torch import load_file, save_file

    run, config, state = _run_copy(finished_run, tmp_path, k=2)
    summary = finished_run.result.summary.validation
    assert summary is not None
    assert summary.bleu_after > summary.bleu_before, "the shared run no longer learns"
    trained = load_file(str(run / "best_model/model.safetensors"))
    untrained = load_file(str(run / "initial_model/model.safetensors"))
    best = f"checkpoint-{state.best_global_step}"
    (other,) = {"checkpoint-9", "checkpoint-18"} - {best}
    for folder, tensors in (
        (run / "checkpoints" / best, untrained),
        (run / "best_model", untrained),  # as the run saves its best checkpoint
        (run / "checkpoints" / other, {n: 2 * trained[n] - untrained[n] for n in trained}),
    ):
        save_file(tensors, str(folder / "model.safetensors"), {"format": "pt"})

    notes: list = []
    result = average_checkpoints(
        state, config, _held_out(finished_run, config), run / "best_model", "cpu", notes.append
    )
    assert isinstance(result, Averaging)
    assert result.record is not None
    assert result.record.validation is not None
    assert result.record.validation.best.bleu == summary.bleu_before
    assert result.record.validation.averaged.bleu == summary.bleu_after
    assert result.record.kept == "averaged"
    assert [n for n in notes if isinstance(n, Note)][-1].text.endswith("; the average is kept")
    assert result.record.model == str(run / "best_model")
    assert not (run / AVERAGED_MODEL).exists()
    published = load_file(str(run / "best_model/model.safetensors"))
    assert all(torch.allclose(published[n], trained[n], atol=1e-6) for n in trained)
    # "after" reuses these validation translations: they are the trained model's.
    assert result.translations == {"validation": _after_translations(run)}


@pytest.mark.slow
def test_one_epoch_checkpoint_is_not_averaged(finished_run: FinishedRun, tmp_path: Path):
    import shutil

    run, config, state = _run_copy(finished_run, tmp_path, k=2)
    best = f"checkpoint-{state.best_global_step}"
    for folder in (run / "checkpoints").iterdir():
        if folder.name != best:
            shutil.rmtree(folder)
    notes: list = []
    result = average_checkpoints(
        state, config, _held_out(finished_run, config), run / "best_model", "cpu", notes.append
    )
    assert [n.text for n in notes if isinstance(n, Note)] == [
        "checkpoint averaging skipped: the run has 1 epoch checkpoint; averaging needs 2 or more"
    ]
    assert result.record is not None
    assert result.record.kept == "best"
    assert result.translations == {}
    assert not (run / AVERAGED_MODEL).exists()
