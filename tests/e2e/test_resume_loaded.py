"""Stop and resume of a run that starts from a saved Marian (``--model <folder>``), and
the cause it once broke on: transformers 5's ``from_pretrained`` leaves every parameter it
loads trainable, so Marian's sinusoidal position tables (built frozen, never saved) were
trained, and a resumed run, which gets them back untrained, drifted from a straight one."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.helpers.processes import same_weights
from tests.helpers.runs import from_model, step_losses
from workbench.core.events import Event, TrainStep
from workbench.core.model.load import frozen_as_built, load_model_and_tokenizer
from workbench.core.train.run_training import run_training


def test_a_loaded_marian_trains_what_a_built_one_trains(tiny_model_dir: Path):
    """A saved Marian loaded for a run trains the parameters its class, built directly,
    trains: every one but the sinusoidal position tables."""
    from transformers import MarianConfig, MarianMTModel

    model = frozen_as_built(load_model_and_tokenizer(str(tiny_model_dir))[0])
    frozen = sorted(n for n, p in model.named_parameters() if not p.requires_grad)
    assert frozen == [
        "model.decoder.embed_positions.weight",
        "model.encoder.embed_positions.weight",
    ]
    built = MarianMTModel(MarianConfig.from_pretrained(str(tiny_model_dir)))
    assert frozen == sorted(n for n, p in built.named_parameters() if not p.requires_grad)


def test_stop_then_resume_from_a_saved_model_equals_a_straight_run_bit_for_bit(
    tmp_path: Path, tiny_model_dir: Path
):
    """Stopped mid-epoch and resumed, a run from a saved Marian logs the straight run's
    losses, every one equal, and saves the same best model.

    Everything the resumed run trains must come back from its checkpoint; a parameter that
    trains but is not saved (the position tables, before they were frozen again) made the
    first step after the checkpoint differ (step 6: 6.77595 against 6.77533)."""

    def run(name: str):
        return from_model(tmp_path, str(tiny_model_dir), name, epochs=2.0, logging_steps=1)

    straight_log: list = []
    straight = run_training(run("a"), step_losses(straight_log))
    log: list = []
    stop = threading.Event()

    def stop_at_step_4(event: Event) -> None:
        step_losses(log)(event)
        if isinstance(event, TrainStep) and event.step >= 4:
            stop.set()

    stopped = run_training(run("b"), stop_at_step_4, stop)
    assert stopped.status == "stopped"
    resumed = run_training(run("b"), step_losses(log), resume=True)
    assert resumed.status == "finished"
    assert resumed.run_dir == stopped.run_dir
    assert [s for s, _ in log] == [s for s, _ in straight_log]
    assert log == straight_log  # every loss equal, not just close
    assert same_weights(resumed.run_dir / "best_model", straight.run_dir / "best_model")
