"""Checkpoint averaging (``--average-checkpoints``): the mean of the weights, the checkpoints kept
for it, and the choice made on validation only.

The tests that train (or build), split from tests/unit/test_averaging.py, whose other tests do
not.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tests.helpers.runs import FinishedRun
from workbench.core.events import Note
from workbench.core.run_folder.layout import RunFolder
from workbench.core.train.averaging import Averaging, average_checkpoints


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

    from workbench.core.run_folder.saved_config import saved_config

    run = finished_run.copy_to(tmp_path / "out")
    config = dataclasses.replace(saved_config(run, "demo"), average_checkpoints=k)
    state = TrainerState.load_from_json(str(run / "checkpoints/checkpoint-18/trainer_state.json"))
    return run, config, state


def _after_translations(run: Path) -> list[str]:
    lines = (run / "validation_translations.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["after"] for line in lines]


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
        else f"the best checkpoint is kept (the average stays in {RunFolder(run).averaged_model})"
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
    assert not RunFolder(run).averaged_model.exists()
    published = load_file(str(run / "best_model/model.safetensors"))
    assert all(torch.allclose(published[n], trained[n], atol=1e-6) for n in trained)
    # "after" reuses these validation translations: they are the trained model's.
    assert result.translations == {"validation": _after_translations(run)}


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
    assert not RunFolder(run).averaged_model.exists()
