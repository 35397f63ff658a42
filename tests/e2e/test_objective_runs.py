"""``train --objective best|cpo|dpo`` end to end: a tiny Marian and a tiny Qwen3, fully
fine-tuned and with LoRA, each run ranking its own candidates by chrF against the
references, writing ``preferences.jsonl``, training on it, and ending with a verdict in
which chrF is marked "(used to rank)" and never leads, and a ceiling. Stop and resume,
during the ranking and during training, end bit for bit where a straight run ends."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from tests.helpers.processes import same_weights
from tests.helpers.runs import from_model, step_losses
from workbench.core.evaluate.metrics import sentence_chrf
from workbench.core.events import Event, Note, PreferenceProgress, RunDone, TrainStep
from workbench.core.preferences.records import read_preferences
from workbench.core.run_folder.layout import RunFolder
from workbench.core.train.run_training import run_training
from workbench.core.views.event_text import EventText

#: (model kind, objective, LoRA): every objective on both kinds, LoRA on and off for each.
CASES = [
    ("marian", "best", False),
    ("marian", "cpo", True),
    ("marian", "dpo", False),
    ("marian", "dpo", True),
    ("qwen3", "best", True),
    ("qwen3", "cpo", False),
    ("qwen3", "dpo", True),
    ("qwen3", "dpo", False),
]


def start(kind: str, tiny_model_dir: Path, causal_models: dict[str, Path]) -> str:
    return str(tiny_model_dir if kind == "marian" else causal_models["qwen3"])


def objective_run(tmp_path: Path, model: str, objective: str, name: str = "out", **extra):
    """A run of a few seconds past the references: 4 candidates a source, one epoch."""
    values = dict(objective=objective, rank_by="chrf", candidates=4, epochs=1.0)
    return from_model(tmp_path, model, name, **{**values, **extra})


@pytest.mark.parametrize(("kind", "objective", "lora"), CASES)
def test_each_objective_trains_on_its_ranked_candidates_and_never_headlines_the_ranker(
    tmp_path, tiny_model_dir, causal_models, kind, objective, lora
):
    events: list[Event] = []
    config = objective_run(
        tmp_path, start(kind, tiny_model_dir, causal_models), objective, lora=lora
    )
    result = run_training(config, events.append)
    assert result.status == "finished"
    summary = result.summary
    record = summary.objective
    assert record is not None
    assert (record.objective, record.rank_by, record.ranker) == (objective, "chrf", "chrF")
    assert record.sources == summary.train_pairs
    assert record.pairs is not None
    assert record.pairs + (record.skipped or 0) == record.sources
    assert (record.beta is not None) == (objective != "best")

    # preferences.jsonl: each line's scores are chrF against its reference, and the choice
    # is the ranker's (the top candidate for best; the pool's best and worst otherwise)
    records = read_preferences(RunFolder(result.run_dir).preferences)
    assert len(records) == record.pairs
    for line in records[:20]:
        assert line.reference is not None
        for candidate in line.candidates:
            assert candidate.score == pytest.approx(sentence_chrf(candidate.text, line.reference))
        scores = [c.score for c in line.candidates]
        if objective == "best":
            assert line.chosen_score == max(scores)
            assert line.chosen in [c.text for c in line.candidates]
        else:
            assert line.reference_score is not None
            pool = [*scores, line.reference_score]
            assert line.chosen_score == max(pool) > line.rejected_score == min(pool)
    assert any(isinstance(e, PreferenceProgress) for e in events)

    # the verdict: chrF ranked, so it is marked and BLEU leads; the ceiling is measured
    done = next(e for e in events if isinstance(e, RunDone))
    text = "\n".join(EventText().lines(done))
    test_line = next(line.strip() for line in text.splitlines() if "test (" in line)
    assert test_line.startswith("test (10% held out, seed 42, 18): BLEU ")
    assert "· chrF (used to rank) " in test_line
    assert "ceiling: the starting model picking by mbr:chrF among 4 candidates" in text
    assert record.ceiling is not None
    assert record.ceiling.change("BLEU") is not None
    # a tuned model below its start on validation is said, and only then
    assert summary.validation is not None
    worse = summary.validation.bleu_after < summary.validation.bleu_before
    said = [e for e in events if isinstance(e, Note) and "below its starting model" in e.text]
    assert bool(said) == worse
    # before is the starting model, scored the same way as after
    assert summary.test is not None
    assert summary.base_model == start(kind, tiny_model_dir, causal_models)


def test_a_second_run_with_another_beta_reuses_the_ranking(tmp_path, tiny_model_dir):
    first = run_training(objective_run(tmp_path, str(tiny_model_dir), "cpo", "a"))
    events: list[Event] = []
    second = run_training(
        objective_run(tmp_path, str(tiny_model_dir), "cpo", "b", beta=0.5), events.append
    )
    assert second.status == "finished"
    assert not any(isinstance(e, PreferenceProgress) for e in events)  # nothing ranked again
    a = RunFolder(first.run_dir).preferences.read_text(encoding="utf-8")
    b = RunFolder(second.run_dir).preferences.read_text(encoding="utf-8")
    assert a == b
    assert second.summary.objective is not None
    assert second.summary.objective.beta == 0.5


@pytest.mark.parametrize("objective", ["best", "cpo", "dpo"])
def test_stop_then_resume_equals_a_straight_run_bit_for_bit(
    tmp_path, tiny_model_dir, monkeypatch, objective
):
    """Stopped once while ranking and once mid-training, resumed each time (the second
    time with the cache deleted): the same preferences, losses and weights as one
    straight run that ranked into a cache of its own."""
    model = str(tiny_model_dir)
    log: list = []
    stop = threading.Event()

    def stop_while_ranking(event: Event) -> None:
        if isinstance(event, PreferenceProgress) and event.done >= 16:
            stop.set()

    config = objective_run(tmp_path, model, objective, "b", epochs=2.0, logging_steps=1)
    ranking = run_training(config, stop_while_ranking, stop)
    assert ranking.status == "stopped"
    assert not RunFolder(ranking.run_dir).preferences.exists()
    stop = threading.Event()

    def stop_at_step_4(event: Event) -> None:
        step_losses(log)(event)
        if isinstance(event, TrainStep) and event.step >= 4:
            stop.set()

    training = run_training(config, stop_at_step_4, stop, resume=True)
    assert training.status == "stopped"
    assert training.run_dir == ranking.run_dir
    # The cache may go (it is always safe to delete): the run trains on what it wrote.
    shutil.rmtree(Path(os.environ["WORKBENCH_CACHE"]) / "preferences")
    events: list[Event] = []

    def both(event: Event) -> None:
        step_losses(log)(event)
        events.append(event)

    resumed = run_training(config, both, resume=True)
    assert resumed.status == "finished"
    assert not any(isinstance(e, PreferenceProgress) for e in events)

    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "straight-cache"))
    straight_log: list = []
    straight = run_training(
        objective_run(tmp_path, model, objective, "a", epochs=2.0, logging_steps=1),
        step_losses(straight_log),
    )
    folder, other = RunFolder(resumed.run_dir), RunFolder(straight.run_dir)
    assert folder.preferences.read_text(encoding="utf-8") == other.preferences.read_text(
        encoding="utf-8"
    )
    assert [s for s, _ in log] == [s for s, _ in straight_log]
    assert log == straight_log  # every loss equal, not just close
    assert resumed.summary.test == straight.summary.test
    assert same_weights(folder.best_model, other.best_model)


def test_the_summary_and_config_record_the_objective(tmp_path, tiny_model_dir):
    result = run_training(objective_run(tmp_path, str(tiny_model_dir), "best"))
    saved = json.loads(RunFolder(result.run_dir).config.read_text(encoding="utf-8"))
    assert (saved["objective"], saved["rank_by"]) == ("best", "chrf")
    summary = json.loads(RunFolder(result.run_dir).summary.read_text(encoding="utf-8"))
    assert summary["objective"]["ranker"] == "chrF"
    assert summary["objective"]["ceiling"]["picked_by"] == "mbr:chrF"
